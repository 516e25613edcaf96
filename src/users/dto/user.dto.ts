import { ApiSchema } from '@nestjs/swagger';

import { ApiInt64 } from '../../common/swagger';
import type { User } from '../entities/user.entity';

/** A user as clients see it (the Galaxy `User`): never the email, never the password hash. */
@ApiSchema({ name: 'User' })
export class UserDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true })
  id: number;

  /** @example Marc */
  name: string | null;

  static from(user: Pick<User, 'id' | 'name'>): UserDto {
    return { id: user.id, name: user.name };
  }
}
