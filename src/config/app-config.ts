import proxyAddr from '@fastify/proxy-addr';
import { Transform } from 'class-transformer';
import { IsEnum, IsIn, IsOptional, IsString, Matches, MinLength, ValidateBy, ValidateIf } from 'class-validator';

import { API_ENVIRONMENTS, type ApiEnvironment } from '../common/auth/api-key-format';
import { isPlainHost } from '../common/http/location';
import { IntSetting } from './int-setting';
import { lookalikeWarnings } from './lookalike-settings';
import { proxyListProblem } from './proxy-networks';
import {
  ConfigValidationError,
  contextOf,
  emptyToUndefined,
  readSettings,
  settingNames,
  type SettingsClass,
} from './settings';

export enum NodeEnv {
  Development = 'development',
  Production = 'production',
  Test = 'test',
}

/** The value of DATABASE_URL that asks for the embedded database by name (required so in production). */
export const EMBEDDED_DATABASE = 'embedded';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
const LOG_FORMATS = ['auto', 'json', 'pretty'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

/** false: X-Forwarded-For is ignored; a number: that many proxy hops; else proxy addresses and CIDRs. */
export type TrustProxySetting = false | number | string[];

const toTrustProxy = ({ value }: { value: unknown }) => {
  if (typeof value !== 'string') return value;
  const v = value.trim();
  if (['', 'false', '0', 'no'].includes(v.toLowerCase())) return false;
  if (/^\d+$/.test(v)) return Number(v);
  if (['true', 'yes'].includes(v.toLowerCase())) return value;
  return v.split(',').map((entry) => entry.trim());
};
/** Whether @fastify/proxy-addr accepts the list: addresses and CIDRs (or its names: loopback, linklocal, uniquelocal). */
const isProxyAddrList = (value: unknown): value is string[] => {
  if (!Array.isArray(value) || value.length === 0 || value.some((entry) => typeof entry !== 'string' || entry === ''))
    return false;
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
/**
 * An origin as browsers send it: scheme, host, optional port, nothing else. The URL parser
 * takes `*` in a host name, and the CORS check compares origins literally, so a wildcard
 * such as https://*.example.org would start and then allow no page: the host must be a
 * plain name or address.
 */
const isExactOrigin = (value: unknown): boolean => {
  if (typeof value !== 'string') return false;
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.origin === value && isPlainHost(url.host);
  } catch {
    return false;
  }
};
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
    return (
      (url.protocol === 'http:' || url.protocol === 'https:') &&
      !url.username &&
      !url.password &&
      !url.search &&
      !url.hash &&
      !value.includes('#')
    );
  } catch {
    return false;
  }
};
const baseUrlSetting = (name: string) =>
  ValidateBy({
    name: 'baseUrl',
    validator: {
      validate: (value: unknown) => value === undefined || isBaseUrl(value),
      defaultMessage: () =>
        `${name} must be an absolute http:// or https:// URL such as https://api.example.org (an optional path; no credentials, query or fragment)`,
    },
  });

/**
 * The settings of the service as a whole and of the shared code (HTTP server, database,
 * logging, metrics, rate limits), validated once at boot. A feature's own settings are in
 * its settings class (ConfigModule.forFeature). Each property is named after its environment
 * variable so that an error message names the variable; `.env.example` documents each one.
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

  @IntSetting({ min: 0, max: 65535 })
  PORT = 3000;

  @IsString()
  HOST = '0.0.0.0';

  @IsIn(LOG_LEVELS)
  LOG_LEVEL: LogLevel = 'info';

  /** `auto`: human-readable in development on a terminal, JSON lines everywhere else. */
  @IsIn(LOG_FORMATS)
  LOG_FORMAT: LogFormat = 'auto';

  /**
   * PostgreSQL connection string, or `embedded` for the embedded database in DATA_DIR, which is
   * also what an absent one means outside production. Production requires it: a misspelt
   * name would otherwise start the service on an empty embedded database.
   */
  @Transform(emptyToUndefined)
  @ValidateIf((c: AppConfig) => c.NODE_ENV === NodeEnv.Production || c.DATABASE_URL !== undefined)
  @Matches(/^(postgres(ql)?:\/\/|embedded$)/, {
    message: ({ value }) =>
      value === undefined
        ? `DATABASE_URL must be set in production: a postgres:// URL, or DATABASE_URL=${EMBEDDED_DATABASE} for the embedded database in DATA_DIR`
        : `DATABASE_URL must be a postgres:// or postgresql:// URL, or DATABASE_URL=${EMBEDDED_DATABASE} for the embedded database in DATA_DIR`,
  })
  DATABASE_URL?: string;

  /**
   * The embedded database's directory; `memory://` (tests) keeps it in memory only, lost at each
   * exit, which production refuses rather than start a service that forgets everything.
   */
  @IsString()
  @MinLength(1)
  @ValidateBy({
    name: 'durableDataDir',
    validator: {
      validate: (value: unknown, args) => {
        const config = args?.object as AppConfig;
        return !(
          config.isProduction &&
          config.DATABASE_URL === EMBEDDED_DATABASE &&
          String(value).startsWith('memory://')
        );
      },
      defaultMessage: () =>
        'DATA_DIR must be a directory in production: memory:// keeps the embedded database in memory only, and everything is lost at each restart (or set DATABASE_URL to a PostgreSQL server)',
    },
  })
  DATA_DIR = './data';

  @IntSetting({ min: 1, max: 200 })
  DATABASE_POOL_SIZE = 10;

  // At most a day: PostgreSQL's own limit is 2^31 ms, and idle transactions get twice this.
  @IntSetting({ min: 100, max: 86_400_000 })
  DATABASE_STATEMENT_TIMEOUT_MS = 15000;

  @IntSetting({ min: 100, max: 86_400_000 })
  DATABASE_LOCK_TIMEOUT_MS = 5000;

  /**
   * Longest wait of a request for a database connection: a new one to open, or a pooled one
   * to come free (also while the server refuses new connections).
   */
  @IntSetting({
    min: 100,
    max: 60000,
    message: {
      min: 'DATABASE_ACQUIRE_TIMEOUT_MS must be at least 100 (milliseconds)',
      max: 'DATABASE_ACQUIRE_TIMEOUT_MS must be at most 60000 (milliseconds)',
    },
  })
  DATABASE_ACQUIRE_TIMEOUT_MS = 5000;

  /** How long a server start keeps retrying a database that does not answer yet; then it exits. */
  @IntSetting({
    min: 0,
    max: 3600000,
    message: {
      min: 'DATABASE_CONNECT_TIMEOUT_MS must be at least 0 (milliseconds; 0: no retry)',
      max: 'DATABASE_CONNECT_TIMEOUT_MS must be at most 3600000 (milliseconds)',
    },
  })
  DATABASE_CONNECT_TIMEOUT_MS = 60000;

  /**
   * The name each connection gives PostgreSQL (pg_stat_activity.application_name), to tell
   * instances apart; unset: the service's name, host name and process id.
   */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^[\x20-\x7e]{1,63}$/, {
    message: 'DATABASE_APPLICATION_NAME must be 1 to 63 printable ASCII characters',
  })
  DATABASE_APPLICATION_NAME?: string;

  /** Milliseconds a client gets to send a whole request (headers and body); then 408. */
  @IntSetting({
    min: 1000,
    max: 600000,
    message: {
      min: 'REQUEST_TIMEOUT_MS must be at least 1000 (milliseconds)',
      max: 'REQUEST_TIMEOUT_MS must be at most 600000 (milliseconds)',
    },
  })
  REQUEST_TIMEOUT_MS = 60000;

  /** Milliseconds that in-flight requests get to finish after SIGTERM. */
  @IntSetting({ min: 0 })
  SHUTDOWN_GRACE_MS = 10000;

  /**
   * Milliseconds between SIGTERM and closing the listener, while /health/ready already answers
   * 503, so that a load balancer stops sending new requests before connections are refused.
   */
  @IntSetting({ min: 0, max: 60000, message: { max: 'SHUTDOWN_DELAY_MS must be at most 60000 (milliseconds)' } })
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
      validate: (value: unknown) =>
        value === false ||
        (Number.isInteger(value) && (value as number) >= 1 && (value as number) <= 10) ||
        (isProxyAddrList(value) && proxyListProblem(value) === undefined),
      defaultMessage: (args) =>
        (isProxyAddrList(args?.value) && proxyListProblem(args.value)) ||
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
      defaultMessage: () =>
        'CORS_ORIGINS must be a comma-separated list of origins such as https://app.example.org (scheme, host and optional port; no path, no wildcard)',
    },
  })
  CORS_ORIGINS: string[] = [];

  /** Failed sign-ins (token or Basic) allowed per client address and email in one window. */
  @IntSetting({ min: 1 })
  LOGIN_FAILURE_LIMIT = 10;

  @IntSetting({ min: 1 })
  LOGIN_FAILURE_WINDOW_SECONDS = 60;

  /** Sign-ups allowed per client address in one window. */
  @IntSetting({ min: 1 })
  SIGNUP_RATE_LIMIT = 20;

  @IntSetting({ min: 1 })
  SIGNUP_RATE_WINDOW_SECONDS = 60;

  /** When set, rate-limit counters live in Redis and are shared by every instance. */
  @Transform(emptyToUndefined)
  @IsOptional()
  @Matches(/^rediss?:\/\//, { message: 'REDIS_URL must be a redis:// or rediss:// URL' })
  REDIS_URL?: string;

  /**
   * Longest wait for a Redis reply. Past it the limits are counted in this instance until Redis
   * answers again, and a connection that stays silent is dropped and reopened.
   */
  @IntSetting({
    min: 10,
    max: 60000,
    message: {
      min: 'REDIS_COMMAND_TIMEOUT_MS must be at least 10 (milliseconds)',
      max: 'REDIS_COMMAND_TIMEOUT_MS must be at most 60000 (milliseconds)',
    },
  })
  REDIS_COMMAND_TIMEOUT_MS = 1000;

  /** Prefix of every Redis key this service writes, so several services can share a Redis. */
  @IsString()
  @MinLength(1)
  REDIS_KEY_PREFIX = 'region-keys-api:';

  /** Port of the separate listener serving GET /metrics (Prometheus); 0 turns metrics off. */
  @IntSetting({
    min: 0,
    max: 65535,
    message: 'METRICS_PORT must be a whole number from 0 to 65535 (0 turns metrics off)',
  })
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

  get isSandbox(): boolean {
    return this.API_ENVIRONMENT === 'sandbox';
  }

  /** The PostgreSQL server's URL; undefined: the embedded database in DATA_DIR. */
  get postgresUrl(): string | undefined {
    return this.DATABASE_URL === EMBEDDED_DATABASE ? undefined : this.DATABASE_URL;
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
}

/** The AppConfig that a feature's settings are read with, for a rule that depends on NODE_ENV or API_ENVIRONMENT. */
export const appConfigOf = (settings: unknown): AppConfig => contextOf<AppConfig>(settings);

interface Source {
  env: NodeJS.ProcessEnv;
  features: Map<SettingsClass, object>;
}
const sources = new WeakMap<AppConfig, Source>();

/**
 * Reads the environment into a typed AppConfig, and with it the settings classes of the
 * features listed (each one's instance is then what settingsOf gives). Throws naming every
 * bad variable, of AppConfig and the features alike.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env, features: readonly SettingsClass[] = []): AppConfig {
  const { settings: config, problems } = readSettings(AppConfig, env);
  const source: Source = { env: { ...env }, features: new Map() };
  for (const Class of features) {
    const feature = readSettings(Class, env, config);
    problems.push(...feature.problems);
    source.features.set(Class, feature.settings);
  }
  // A misspelt name is often why a setting is missing: the refusal says so too.
  if (problems.length > 0) throw new ConfigValidationError([...problems, ...lookalikes(env, features)]);
  sources.set(config, source);
  return config;
}

const lookalikes = (env: NodeJS.ProcessEnv, features: Iterable<SettingsClass>): string[] =>
  lookalikeWarnings(env, [AppConfig, ...features].flatMap(settingNames));

/**
 * One warning line per variable of the environment `config` was read from that looks like a
 * setting of AppConfig or of the features read with it, without being one. Each entry point
 * logs them at start.
 */
export function lookalikeSettingsOf(config: AppConfig): string[] {
  const source = sources.get(config);
  return source ? lookalikes(source.env, source.features.keys()) : [];
}

/**
 * Reads one feature's settings class from `env`; rules that depend on NODE_ENV or
 * API_ENVIRONMENT see those of `config`. Throws naming each bad variable.
 */
export function loadSettings<T extends object>(
  Class: SettingsClass<T>,
  env: NodeJS.ProcessEnv = process.env,
  config: AppConfig = loadConfig(env),
): T {
  const { settings, problems } = readSettings(Class, env, config);
  if (problems.length > 0) throw new ConfigValidationError(problems);
  return settings;
}

/**
 * A feature's settings, from the environment `config` was read from: the instance loadConfig
 * validated when the class was listed there, else one validated now.
 */
export function settingsOf<T extends object>(config: AppConfig, Class: SettingsClass<T>): T {
  const source = sources.get(config);
  if (!source) throw new Error(`${Class.name} can only be read along with an AppConfig made by loadConfig`);
  let settings = source.features.get(Class) as T | undefined;
  if (!settings) {
    settings = loadSettings(Class, source.env, config);
    source.features.set(Class, settings);
  }
  return settings;
}
