import { ApiSchema } from '@nestjs/swagger';

@ApiSchema({ name: 'Liveness' })
export class LivenessDto {
  /** @example ok */
  status: 'ok';
}

@ApiSchema({ name: 'Readiness' })
export class ReadinessDto {
  /** @example ok */
  status: 'ok';

  /** @example up */
  database: 'up';

  /**
   * For information; readiness does not depend on it. Redis holds the rate-limit counters, shared by every instance, when REDIS_URL is set: `degraded` while it does not answer and this instance counts on its own.
   * @example 'not configured'
   */
  redis: 'up' | 'degraded' | 'not configured';
}
