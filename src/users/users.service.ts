import { Injectable } from '@nestjs/common';
import { normalizeEmail } from './email';
import type { User } from './entities/user.entity';
import { PasswordHasher } from './password-hasher';
import { EmailTakenError } from './users.errors';
import { type UserCredentials, type UserProfile, UsersRepository } from './users.repository';

export interface SignUp {
  name?: string | null;
  email: string;
  password: string;
}

@Injectable()
export class UsersService {
  constructor(
    private readonly repository: UsersRepository,
    private readonly hasher: PasswordHasher,
  ) {}

  async signUp({ name, email, password }: SignUp): Promise<User> {
    const passwordHash = await this.hasher.hash(password);
    const user = await this.repository.insertUnlessEmailTaken({ name: name ?? null, email: normalizeEmail(email), passwordHash });
    if (!user) throw new EmailTakenError();
    return user;
  }

  findByEmail(email: string): Promise<UserCredentials | null> {
    return this.repository.findByEmail(normalizeEmail(email));
  }

  findById(id: number): Promise<UserProfile | null> {
    return this.repository.findById(id);
  }
}
