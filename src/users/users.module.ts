import { Module } from '@nestjs/common';

import { IdempotencyModule } from '../common/idempotency';
import { RateLimitModule } from '../common/rate-limit';
import { ConfigModule } from '../config';
import { PasswordHasher } from './password-hasher';
import { UsersController } from './users.controller';
import { UsersRepository } from './users.repository';
import { UsersService } from './users.service';
import { UsersSettings } from './users.settings';

@Module({
  imports: [ConfigModule.forFeature(UsersSettings), RateLimitModule, IdempotencyModule],
  controllers: [UsersController],
  providers: [UsersRepository, UsersService, PasswordHasher],
  exports: [UsersService, PasswordHasher],
})
export class UsersModule {}
