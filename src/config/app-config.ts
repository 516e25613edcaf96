import { plainToInstance, Transform } from 'class-transformer';
import {
  IsBoolean,
  IsEnum,
  IsIn,
  IsInt,
  IsOptional,
  IsString,
  Matches,
  Max,
  MaxLength,
  Min,
  MinLength,
  ValidateBy,
  ValidateIf,
  validateSync,
} from 'class-validator';
import proxyAddr from '@fastify/proxy-addr';
import {
  API_ENVIRONMENTS,
  API_KEY_PREFIX,
  API_KEY_PREFIXES,
  type ApiEnvironment,
  generatedKeyEnvironment,
} from '../common/auth/api-key-format';

export enum NodeEnv {
  Development = 'development',
  Production = 'production',
  Test = 'test',
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** false: X-Forwarded-For is ignored; a number: that many proxy hops; else proxy addresses and CIDRs. */
export type TrustProxySetting = false | number | string[];

const toInt = ({ value }: { value: unknown }) =>
  typeof value === 'string' && /^-?\d+$/.test(value.trim()) ? Number(value) : value;
const toBool = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim().toLowerCase();
  if (['true', '1', 'yes'].includes(v)) return true;
  if (['false', '0', 'no', ''].includes(v)) return false;
  return value;
};
const toTrustProxy = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim();
  if (['', 'false', '0', 'no'].includes(v.toLowerCase())) return false;
  if (/^\d+$/.test(v)) return Number(v);
  if (['true', 'yes'].includes(v.toLowerCase())) return value;
  return v.split(',').map((entry) => entry.trim());
};
/** Whether @fastify/proxy-addr accepts the list: addresses and CIDRs (or its names: loopback, linklocal, uniquelocal). */
const isProxyList = (value: unknown): boolean => {
  if (!Array.isArray(value) || value.length === 0 || value.some((entry) => typeof entry !== 'string' || entry === '')) return false;
  try {
    proxyAddr.compile(value as string[]);
    return true;
  } catch {
    return false;
  }
};
const toOriginList = ({ value }: { value: unknown }) =>
  typeof value === 'string'
    ? value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '')
    : value;
/** An origin as browsers send it: scheme, host, optional port, nothing else. */
const isExactOrigin = (value: unknown): boolean => {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value;
  } catch {
    return false;
  }
};
const emptyToUndefined = ({ value }: { value: unknown }) =>
  typeof value === 'string' && value.trim() === '' ? undefined : value;
/** A base URL as the OpenAPI `servers` list shows it: no trailing slash, so paths join cleanly. */
const toBaseUrl = ({ value }: { value: unknown }) => {
  const v = emptyToUndefined({ value });
  return typeof v === 'string' ? v.trim().replace(/\/+$/, '') : v;
};
/** An absolute http(s) URL that a client can put a path after: no credentials, query or fragment. */
const isBaseUrl = (value: unknown): boolean => {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && !url.username && !url.password && !url.search && !url.hash && !value.includes('#');
  } catch {
    return false;
  }
};
const baseUrlSetting = (name: string) =>
  ValidateBy({
    name: 'baseUrl',
    validator: {
      validate: (value: unknown) => value === undefined || isBaseUrl(value),
      defaultMessage: () => `${name} must be an absolute http:// or https:// URL such as https://api.example.org (an optional path; no credentials, query or fragment)`,
    },
  });
const otherEnvironment = (environment: ApiEnvironment): ApiEnvironment => (environment === 'live' ? 'sandbox' : 'live');

/**
 * Every setting the service reads, validated once at boot. Each property is named
 * after its environment variable so that an error message names the variable.
 * `.env.example` documents each one.
 */
export class AppConfig {
  @IsEnum(NodeEnv)
  NODE_ENV: NodeEnv = NodeEnv.Development;

  /**
   * Which environment this deployment is: `live`, or `sandbox` for integrators' tests (its own
   * address and database, `rk_test_` keys, sample data, X-API-Environment on every response).
   */
  @IsIn(API_ENVIRONMENTS, { message: `API_ENVIRONMENT must be one of: ${API_ENVIRONMENTS.join(', ')}` })
  API_ENVIRONMENT: ApiEnvironment = 'live';

  /** The live service's public base URL; listed in the OpenAPI document's servers when set. */
  @Transform(toBaseUrl)
  @baseUrlSetting('PUBLIC_BASE_URL')
  PUBLIC_BASE_URL?: string;

  /** The sandbox's public base URL; listed in the OpenAPI document's servers when set. */
  @Transform(toBaseUrl)
  @baseUrlSetting('SANDBOX_BASE_URL')
  SANDBOX_BASE_URL?: string;

  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(65535)
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** `auto`: human-readable in development on a terminal, JSON lines everywhere else. */
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: LogFormat = 'auto';

  /** PostgreSQL connection string; when absent the embedded database in DATA_DIR is used. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^postgres(ql)?:\/\//, { message: 'DATABASE_URL must be a postgres:// or postgresql:// URL' })
  DATABASE_URL?: string;

  @IsString()
  @MinLength(1)
  DATA_DIR = './data';

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(200)
  DATABASE_POOL_SIZE = 10;

  @Transform(toInt)
  @IsInt()
  @Min(100)
  DATABASE_STATEMENT_TIMEOUT_MS = 15000;

  @Transform(toInt)
  @IsInt()
  @Min(100)
  DATABASE_LOCK_TIMEOUT_MS = 5000;

  /** Longest wait for a database connection: a new one to open, or a pooled one to come free. */
  @Transform(toInt)
  @IsInt()
  @Min(100, { message: 'DATABASE_CONNECT_TIMEOUT_MS must be at least 100 (milliseconds)' })
  @Max(60000, { message: 'DATABASE_CONNECT_TIMEOUT_MS must be at most 60000 (milliseconds)' })
  DATABASE_CONNECT_TIMEOUT_MS = 5000;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  INITIAL_REGION_NAME?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  @MinLength(32, { message: 'INITIAL_REGION_API_KEY must be at least 32 characters long' })
  @MaxLength(256)
  @Matches(/^[\x21-\x7e]+$/, { message: 'INITIAL_REGION_API_KEY must consist of printable ASCII characters without spaces' })
  // Keys with the rk_ prefix are checked as generated keys (checksum included) before any
  // lookup: a made-up rk_ value would create the region with a key that never authenticates.
  @ValidateBy({
    name: 'isGeneratedWhenPrefixed',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || !value.startsWith(API_KEY_PREFIX) || generatedKeyEnvironment(value) !== null,
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
        return environment === null || environment === (args?.object as AppConfig).API_ENVIRONMENT;
      },
      defaultMessage: (args) => {
        const here = (args?.object as AppConfig).API_ENVIRONMENT;
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

  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(10000)
  MAX_API_KEYS_PER_REGION = 100;

  /** Seconds between two writes of an API key's lastUsedAt. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  API_KEY_LAST_USED_RESOLUTION_SECONDS = 60;

  /**
   * Milliseconds between two writes of the per-key usage counts of one instance. The contract
   * promises at most one a minute, so less is refused outside NODE_ENV=test (where it lets a
   * test see the timer work without waiting a minute).
   */
  @Transform(toInt)
  @IsInt()
  @Max(3600000, { message: 'API_KEY_USAGE_FLUSH_INTERVAL_MS must be at most 3600000 (an hour)' })
  @ValidateBy({
    name: 'usageFlushInterval',
    validator: {
      validate: (value: unknown, args) =>
        typeof value === 'number' && value >= ((args?.object as AppConfig).NODE_ENV === NodeEnv.Test ? 100 : 60000),
      defaultMessage: () => 'API_KEY_USAGE_FLUSH_INTERVAL_MS must be at least 60000 (usage is written at most once a minute)',
    },
  })
  API_KEY_USAGE_FLUSH_INTERVAL_MS = 60000;

  /** Milliseconds a client gets to send a whole request (headers and body); then 408. */
  @Transform(toInt)
  @IsInt()
  @Min(1000, { message: 'REQUEST_TIMEOUT_MS must be at least 1000 (milliseconds)' })
  @Max(600000, { message: 'REQUEST_TIMEOUT_MS must be at most 600000 (milliseconds)' })
  REQUEST_TIMEOUT_MS = 60000;

  /** Milliseconds that in-flight requests get to finish after SIGTERM. */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  SHUTDOWN_GRACE_MS = 10000;

  /**
   * Milliseconds between SIGTERM and closing the listener, while /health/ready already answers
   * 503, so that a load balancer stops sending new requests before connections are refused.
   */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(60000, { message: 'SHUTDOWN_DELAY_MS must be at most 60000 (milliseconds)' })
  SHUTDOWN_DELAY_MS = 0;

  /**
   * Which peers may tell the client's address in X-Forwarded-For: `false` (none), a number of
   * proxy hops in front of the service, or a comma-separated list of proxy addresses and CIDRs.
   * `true` (trust anyone) is refused: every client could then choose its own address.
   */
  @Transform(toTrustProxy)
  @ValidateBy({
    name: 'trustProxy',
    validator: {
      validate: (value: unknown) => value === false || (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 10) || isProxyList(value),
      defaultMessage: () =>
        'TRUST_PROXY must be false, a number of proxy hops (1..10), or a comma-separated list of proxy addresses or CIDRs (e.g. 10.0.0.0/8,127.0.0.1); true would let any client choose its own address',
    },
  })
  TRUST_PROXY: TrustProxySetting = false;

  /** Origins (exact, comma-separated) whose browser pages may call the API; empty: none. */
  @Transform(toOriginList)
  @ValidateBy({
    name: 'corsOrigins',
    validator: {
      validate: (value: unknown) => Array.isArray(value) && value.every(isExactOrigin),
      defaultMessage: () => 'CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.org (scheme, host and optional port; no path, no wildcard)',
    },
  })
  CORS_ORIGINS: string[] = [];

  /** bcrypt work factor for new password hashes (each step doubles the time). */
  @Transform(toInt)
  @IsInt()
  @Min(4)
  @Max(16)
  BCRYPT_COST = 12;

  /** HS256 key for user tokens. Required in production; elsewhere a random one is made at boot. */
  @Transform(emptyToUndefined)
  @ValidateIf((c: AppConfig) => c.NODE_ENV === NodeEnv.Production || c.JWT_SECRET !== undefined)
  @MinLength(32, { message: 'JWT_SECRET must be at least 32 characters long' })
  @IsString({ message: 'JWT_SECRET must be set in production' })
  JWT_SECRET?: string;

  /** Lifetime of a user token, in seconds. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  JWT_TTL = 3600;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_ISSUER?: string;

  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  JWT_AUDIENCE?: string;

  /** How long a successful Basic verification is remembered (0 turns the cache off). */
  @Transform(toInt)
  @IsInt()
  @Min(0)
  BASIC_AUTH_CACHE_TTL_SECONDS = 300;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  BASIC_AUTH_CACHE_MAX_ENTRIES = 10000;

  /** Failed sign-ins (token or Basic) allowed per client address and email in one window. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  LOGIN_FAILURE_LIMIT = 10;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  LOGIN_FAILURE_WINDOW_SECONDS = 60;

  /** Sign-ups allowed per client address in one window. */
  @Transform(toInt)
  @IsInt()
  @Min(1)
  SIGNUP_RATE_LIMIT = 20;

  @Transform(toInt)
  @IsInt()
  @Min(1)
  SIGNUP_RATE_WINDOW_SECONDS = 60;

  /** When set, rate-limit counters live in Redis and are shared by every instance. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /**
   * Longest wait for a Redis reply. Past it the request is answered without Redis (503, or a
   * cached Basic success), and a connection that stays silent is dropped and reopened.
   */
  @Transform(toInt)
  @IsInt()
  @Min(10, { message: 'REDIS_COMMAND_TIMEOUT_MS must be at least 10 (milliseconds)' })
  @Max(60000, { message: 'REDIS_COMMAND_TIMEOUT_MS must be at most 60000 (milliseconds)' })
  REDIS_COMMAND_TIMEOUT_MS = 1000;

  /** Prefix of every Redis key this service writes, so several services can share a Redis. */
  @IsString()
  @MinLength(1)
  REDIS_KEY_PREFIX = 'region-keys-api:';

  /** Planet image uploads stored at once on one instance, once received; more are refused (503). */
  @Transform(toInt)
  @IsInt()
  @Min(1, { message: 'UPLOAD_CONCURRENCY must be at least 1' })
  @Max(100, { message: 'UPLOAD_CONCURRENCY must be at most 100' })
  UPLOAD_CONCURRENCY = 4;

  /**
   * Sample planets for a first look. Unset: on the embedded database (no DATABASE_URL) and in
   * a sandbox. Either way at most once per database, and in auto mode only while it has no planets.
   */
  @Transform(({ value }) => (emptyToUndefined({ value }) === undefined ? undefined : toBool({ value })))
  @IsOptional()
  @IsBoolean()
  @ValidateBy({
    name: 'sandboxHasSamples',
    validator: {
      validate: (value: unknown, args) => value !== false || (args?.object as AppConfig).API_ENVIRONMENT !== 'sandbox',
      defaultMessage: () => 'SEED_SAMPLE_DATA cannot be false when API_ENVIRONMENT is sandbox: a sandbox always starts with sample data. Unset it',
    },
  })
  SEED_SAMPLE_DATA?: boolean;

  /** Port of the separate listener serving GET /metrics (Prometheus); 0 turns metrics off. */
  @Transform(toInt)
  @IsInt({ message: 'METRICS_PORT must be a whole number from 0 to 65535 (0 turns metrics off)' })
  @Min(0, { message: 'METRICS_PORT must be a whole number from 0 to 65535 (0 turns metrics off)' })
  @Max(65535, { message: 'METRICS_PORT must be a whole number from 0 to 65535 (0 turns metrics off)' })
  METRICS_PORT = 9464;

  /** Interface of the metrics listener; unset: the same as HOST. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @IsString()
  METRICS_HOST?: string;

  /** The commit being run, shown in the build_info metric; set by whoever deploys it. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[\x21-\x7e]{1,64}$/, { message: 'GIT_COMMIT must be at most 64 printable characters without spaces' })
  GIT_COMMIT?: string;

  /**
   * Longest pause allowed between two pieces of an image upload's body; then 408. An upload
   * is read before it may take one of the UPLOAD_CONCURRENCY slots, so this is what keeps a
   * stalled client from holding its memory and socket until REQUEST_TIMEOUT_MS.
   */
  @Transform(toInt)
  @IsInt()
  @Min(100, { message: 'UPLOAD_IDLE_TIMEOUT_MS must be at least 100 (milliseconds)' })
  @Max(600000, { message: 'UPLOAD_IDLE_TIMEOUT_MS must be at most 600000 (milliseconds)' })
  UPLOAD_IDLE_TIMEOUT_MS = 10000;

  get isSandbox(): boolean {
    return this.API_ENVIRONMENT === 'sandbox';
  }

  get isProduction(): boolean {
    return this.NODE_ENV === NodeEnv.Production;
  }

  /**
   * This deployment's own public base URL (PUBLIC_BASE_URL, or SANDBOX_BASE_URL on a sandbox),
   * or undefined when not configured. Absolute URIs the service sends start with it.
   */
  get ownBaseUrl(): string | undefined {
    return this.isSandbox ? this.SANDBOX_BASE_URL : this.PUBLIC_BASE_URL;
  }

  get initialRegionName(): string {
    return this.INITIAL_REGION_NAME ?? 'Default region';
  }
}

export class ConfigValidationError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigValidationError';
  }
}

/** A setting's value as an error message may show it: no secrets, no passwords in URLs. */
function displayValue(name: string, value: unknown): string {
  if (/KEY|SECRET|PASSWORD/.test(name)) return '(hidden)';
  if (typeof value === 'string' && name.endsWith('_URL')) {
    return JSON.stringify(value.replace(/\/\/([^:/@]*):[^@/]*@/, '//$1:***@'));
  }
  return JSON.stringify(value);
}

/** Reads the environment into a typed AppConfig; throws naming each bad variable. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): AppConfig {
  const known = Object.keys(new AppConfig());
  const raw: Record<string, unknown> = {};
  for (const name of known) {
    if (env[name] !== undefined) raw[name] = env[name];
  }
  const config = plainToInstance(AppConfig, raw);
  const errors = validateSync(config, { forbidUnknownValues: false });
  if (errors.length > 0) {
    throw new ConfigValidationError(
      errors.map((e) => {
        const messages = Object.values(e.constraints ?? {});
        return `${e.property}=${displayValue(e.property, e.value)}: ${messages.join('; ')}`;
      }),
    );
  }
  return config;
}
