import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsOptional, IsString, Length, MaxLength } from 'class-validator';

import { IsPlainText, IsUtf8ByteLength, PLAIN_TEXT_RULE, trim } from '../../common/validation';
import { EMAIL_MAX_LENGTH, EMAIL_RULE, IsAccountEmail } from '../email';
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_BYTES } from '../password-policy';

@ApiSchema({ name: 'NewUser' })
export class SignUpDto {
  /** @example Marc */
  @ApiProperty({ type: 'string', description: `Trimmed. ${PLAIN_TEXT_RULE}` })
  @Transform(trim)
  @IsOptional()
  @IsString()
  @Length(1, 100)
  @IsPlainText()
  name?: string | null;

  /** @example marc@scalar.com */
  // The plugin reads a validator's bound only when it is written as a number.
  @ApiProperty({ format: 'email', maxLength: EMAIL_MAX_LENGTH, description: EMAIL_RULE })
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
