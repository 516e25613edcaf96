import { ApiSchema } from '@nestjs/swagger';
import { IsInt, Max, Min } from 'class-validator';

import { ApiInteger } from '../../common/swagger';
import { MAX_RATE_LIMIT_PER_SECONDS, MAX_RATE_LIMIT_REQUESTS } from '../key-rate-limit';

/** A key's own rate limit: at most `requests` requests in each window of `perSeconds` seconds (a fixed window). */
@ApiSchema({ name: 'ApiKeyRateLimit' })
export class KeyRateLimitDto {
  /**
   * Requests the key may make in one window, counted over every instance of the service.
   * @example 600
   */
  // The plugin reads a validator's bound only when it is written as a number.
  @ApiInteger({ maximum: MAX_RATE_LIMIT_REQUESTS })
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT_REQUESTS)
  requests: number;

  /**
   * The window, in seconds.
   * @example 60
   */
  @ApiInteger({ maximum: MAX_RATE_LIMIT_PER_SECONDS })
  @IsInt()
  @Min(1)
  @Max(MAX_RATE_LIMIT_PER_SECONDS)
  perSeconds: number;
}
