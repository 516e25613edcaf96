import { Transform } from 'class-transformer';
import { IsOptional, IsString, Matches, MaxLength, MinLength, ValidateBy } from 'class-validator';

import { API_KEY_PREFIX, API_KEY_PREFIXES, type ApiEnvironment, generatedKeyEnvironment } from '../common/auth';
import { IsPlainText } from '../common/validation';
import { appConfigOf, emptyToUndefined, IntSetting, NodeEnv } from '../config';
import {
  type KeyRateLimit,
  MAX_RATE_LIMIT_PER_SECONDS,
  MAX_RATE_LIMIT_REQUESTS,
  parseRateLimit,
} from './key-rate-limit';

const otherEnvironment = (environment: ApiEnvironment): ApiEnvironment => (environment === 'live' ? 'sandbox' : 'live');

/** The settings of the region keys: the first region, the key limit, the keys' default rate limit, and how often use is written. */
export class RegionKeysSettings {
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @IsPlainText()
  INITIAL_REGION_NAME?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'INITIAL_REGION_API_KEY must be at least 32 characters long' })
  @MaxLength(256)
  @Matches(/^[\x21-\x7e]+$/, {
    message: 'INITIAL_REGION_API_KEY must consist of printable ASCII characters without spaces',
  })
  // Keys with the rk_ prefix are checked as generated keys (checksum included) before any
  // lookup: a made-up rk_ value would create the region with a key that never authenticates.
  @ValidateBy({
    name: 'isGeneratedWhenPrefixed',
    validator: {
      validate: (value: unknown) =>
        typeof value !== 'string' || !value.startsWith(API_KEY_PREFIX) || generatedKeyEnvironment(value) !== null,
      defaultMessage: () =>
        `INITIAL_REGION_API_KEY starts with ${API_KEY_PREFIX} but is not a generated key (its length, characters or checksum ` +
        'are wrong), so it could never authenticate. Make one with `npm run --silent cli -- key generate`, or choose ' +
        `a value without the ${API_KEY_PREFIX} prefix`,
    },
  })
  // Each environment refuses the other's keys, so a key of the other one could never authenticate here either.
  @ValidateBy({
    name: 'isOfThisEnvironment',
    validator: {
      validate: (value: unknown, args) => {
        const environment = typeof value === 'string' ? generatedKeyEnvironment(value) : null;
        return environment === null || environment === appConfigOf(args?.object).API_ENVIRONMENT;
      },
      defaultMessage: (args) => {
        const here = appConfigOf(args?.object).API_ENVIRONMENT;
        const other = otherEnvironment(here);
        return (
          `INITIAL_REGION_API_KEY is a ${other} key (${API_KEY_PREFIXES[other]}) but API_ENVIRONMENT is ${here}, which refuses ` +
          `${other} keys, so it could never authenticate. Make a ${here} key with \`npm run --silent cli -- key generate\` ` +
          `under API_ENVIRONMENT=${here}, or set API_ENVIRONMENT=${other}`
        );
      },
    },
  })
  INITIAL_REGION_API_KEY?: string;

  @IntSetting({ min: 1, max: 10000 })
  MAX_API_KEYS_PER_REGION = 100;

  /** How far ahead a key's expiresAt may be, in days (on create, roll and PATCH). */
  @IntSetting({ min: 1, max: 3660 })
  API_KEY_MAX_LIFETIME_DAYS = 366;

  /** Seconds between two writes of an API key's lastUsedAt. */
  @IntSetting({ min: 0 })
  API_KEY_LAST_USED_RESOLUTION_SECONDS = 60;

  /**
   * Milliseconds between two writes of the per-key usage counts of one instance. The contract
   * promises at most one a minute, so less is refused outside NODE_ENV=test (where it lets a
   * test see the timer work without waiting a minute).
   */
  @IntSetting({ max: 3600000, message: { max: 'API_KEY_USAGE_FLUSH_INTERVAL_MS must be at most 3600000 (an hour)' } })
  @ValidateBy({
    name: 'usageFlushInterval',
    validator: {
      validate: (value: unknown, args) =>
        typeof value === 'number' && value >= (appConfigOf(args?.object).NODE_ENV === NodeEnv.Test ? 100 : 60000),
      defaultMessage: () =>
        'API_KEY_USAGE_FLUSH_INTERVAL_MS must be at least 60000 (usage is written at most once a minute)',
    },
  })
  API_KEY_USAGE_FLUSH_INTERVAL_MS = 60000;

  /**
   * The rate limit of every key whose own is null: `<requests>/<seconds>`, e.g. `600/60`
   * (requests 1..100000, seconds 1..3600, as a key's own).
   */
  @IsString()
  @ValidateBy({
    name: 'isRateLimit',
    validator: {
      validate: (value: unknown) => typeof value === 'string' && parseRateLimit(value) !== null,
      defaultMessage: () =>
        `REGION_KEY_RATE_LIMIT must be <requests>/<seconds>, such as 600/60: whole numbers, requests 1 to ` +
        `${MAX_RATE_LIMIT_REQUESTS} and seconds 1 to ${MAX_RATE_LIMIT_PER_SECONDS}`,
    },
  })
  REGION_KEY_RATE_LIMIT = '600/60';

  get regionKeyRateLimit(): KeyRateLimit {
    return parseRateLimit(this.REGION_KEY_RATE_LIMIT)!;
  }
  /** Leak reports (POST /auth/region/api-keys/leaked) per client address in one window, whatever their answer. */
  @IntSetting({ min: 1, max: 100000 })
  LEAK_REPORT_RATE_LIMIT = 60;

  /** That window, in seconds. */
  @IntSetting({ min: 1, max: 86400 })
  LEAK_REPORT_RATE_WINDOW_SECONDS = 3600;

  /**
   * The least time a leak report takes to be answered, in milliseconds: long enough to cover the
   * revocation of a batch of keys, so that the answer's timing does not tell which keys were real.
   */
  @IntSetting({ min: 0, max: 10000 })
  LEAK_REPORT_MIN_ANSWER_MS = 500;

  get initialRegionName(): string {
    return this.INITIAL_REGION_NAME ?? 'Default region';
  }
}
