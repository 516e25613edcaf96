import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, MaxLength } from 'class-validator';

import { ApiInt64 } from '../../common/swagger';
import { IsOmittable, IsPlainText, IsUtf8ByteLength, trim } from '../../common/validation';
import { EMAIL_MAX_LENGTH, IsAccountEmail } from '../email';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES } from '../password-policy';

@ApiSchema({ name: 'NewUser' })
export class SignUpDto {
  /** @example 1 */
  @ApiInt64({
    readOnly: true,
    description: 'Ignored: the server sets it. Accepted so that a User as a Galaxy client builds it can be sent.',
  })
  @IsOmittable()
  @IsInt()
  id?: number;

  /** @example Marc */
  @Transform(trim)
  @IsOptional()
  @IsString()
  @Length(1, 100)
  @IsPlainText({ description: 'Trimmed.' })
  name?: string | null;

  /**
   * Trimmed. One account per canonical form: compared after Unicode NFKC normalisation, lower-casing, and with the domain in IDNA ASCII form (so "BÜCHER.com" and "xn--bcher-kva.com" are one domain). Refused: invisible, control and bidirectional characters, and Latin mixed with Cyrillic or Greek in the local part or in one domain label.
   * @example marc@scalar.com
   */
  @Transform(trim)
  @IsString()
  @MaxLength(EMAIL_MAX_LENGTH)
  @IsAccountEmail()
  email: string;

  /** @example i-love-scalar */
  @ApiProperty({
    writeOnly: true,
    // JSON Schema counts characters, the rule counts bytes: only the upper bound carries
    // over (72 characters are at least 72 bytes); "€€€" is 3 characters and enough.
    maxLength: PASSWORD_MAX_BYTES,
    description: `${PASSWORD_MIN_BYTES} to ${PASSWORD_MAX_BYTES} bytes in UTF-8 (a multi-byte character counts as several). Longer passwords are refused, never cut.`,
  })
  @IsUtf8ByteLength(PASSWORD_MIN_BYTES, PASSWORD_MAX_BYTES)
  password: string;
}
