import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import type { User } from '../entities/user.entity';

/** A user as clients see it (the Galaxy `User`): never the email, never the password hash. */
@ApiSchema({ name: 'User' })
export class UserDto {
  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, example: 1 })
  id: number;

  @ApiProperty({ type: 'string', nullable: true, example: 'Marc' })
  name: string | null;

  static from(user: Pick<User, 'id' | 'name'>): UserDto {
    return { id: user.id, name: user.name };
  }
}
