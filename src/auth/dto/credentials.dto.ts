import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsString, MaxLength } from 'class-validator';

import { IsUtf8ByteLength, trim } from '../../common/validation';
import { EMAIL_MAX_LENGTH, IsAccountEmail, PASSWORD_MAX_BYTES } from '../../users';

@ApiSchema({ name: 'Credentials' })
export class CredentialsDto {
  /**
   * Any spelling of the address signed up with that has the same canonical form (see NewUser.email): case, Unicode normalisation, Unicode or IDNA ASCII domain.
   * @example marc@scalar.com
   */
  @Transform(trim)
  @IsString()
  @MaxLength(EMAIL_MAX_LENGTH)
  @IsAccountEmail()
  email: string;

  /**
   * At most 72 bytes in UTF-8.
   * @example i-love-scalar
   */
  // No minimum beyond one byte: a password that met an older, shorter rule must still work.
  @ApiProperty({ writeOnly: true, minLength: 1, maxLength: PASSWORD_MAX_BYTES })
  @IsUtf8ByteLength(1, PASSWORD_MAX_BYTES)
  password: string;
}

@ApiSchema({ name: 'Token' })
export class TokenDto {
  /**
   * A JWT (HS256). Send it as `Authorization: Bearer <token>`. It expires after JWT_TTL seconds (1 hour by default).
   * @example eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxIiwiaWF0IjoxNzk0NjQ3MzAwLCJleHAiOjE3OTQ2NTA5MDB9.c2lnbmF0dXJl
   */
  token: string;
}
