import { randomBytes } from 'node:crypto';

import { Global, Logger, Module } from '@nestjs/common';

import { ConfigModule } from '../../config/config.module';
import { AnswerCipher } from './answer-cipher';
import { IdempotencyInterceptor } from './idempotency.interceptor';
import { IdempotencyRepository } from './idempotency.repository';
import { ServerSecret } from './server-secret';

function answerCipher(settings: ServerSecret): AnswerCipher {
  if (settings.JWT_SECRET) return new AnswerCipher(settings.JWT_SECRET);
  new Logger('Idempotency').warn(
    'JWT_SECRET is not set: answers kept for Idempotency-Key retries are encrypted with a random secret made at start. ' +
      'After a restart, or on another instance, a retry is told its answer is lost (it is never carried out twice).',
  );
  return new AnswerCipher(randomBytes(32).toString('base64url'));
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
