import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

import { toIntSetting } from '../config';

/** The settings of user accounts. */
export class UsersSettings {
  /** bcrypt work factor for new password hashes (each step doubles the time). */
  @Transform(toIntSetting)
  @IsInt()
  @Min(4)
  @Max(16)
  BCRYPT_COST = 12;
}
