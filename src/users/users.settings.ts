import { IntSetting } from '../config';

/** The settings of user accounts. */
export class UsersSettings {
  /** bcrypt work factor for new password hashes (each step doubles the time). */
  @IntSetting({ min: 4, max: 16 })
  BCRYPT_COST = 12;
}
