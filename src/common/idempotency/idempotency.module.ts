import { randomBytes } from 'node:crypto';

import { Global, Module } from '@nestjs/common';

import { ConfigModule } from '../../config/config.module';
import { AnswerCipher } from './answer-cipher';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { ServerSecret } from './server-secret';

function answerCipher(settings: ServerSecret): AnswerCipher {
  return settings.JWT_SECRET
    ? new AnswerCipher(settings.JWT_SECRET)
    : new AnswerCipher(randomBytes(32).toString('base64url'), true);
}

/**
 * What @Idempotent() routes need. Each feature module with such routes imports it, so that its
 * controllers resolve the interceptor in any context (the server, or the operator CLI, which
 * has no CommonModule); global and static, so there is one instance however often imported.
 */
@Global()
@Module({
  imports: [ConfigModule.forFeature(ServerSecret)],
  providers: [
    IdempotencyRepository,
    IdempotencyInterceptor,
    { provide: AnswerCipher, inject: [ServerSecret], useFactory: answerCipher },
  ],
  exports: [IdempotencyRepository, IdempotencyInterceptor, AnswerCipher],
})
export class IdempotencyModule {}
