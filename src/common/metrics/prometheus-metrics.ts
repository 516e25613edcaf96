import { readFileSync } from 'node:fs';
import { findPackageJSON } from 'node:module';

import { collectDefaultMetrics, Counter, Gauge, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

import { poolOf } from '../../database';
import { RequestDurations } from './request-durations';
import {
  API_KEY_OUTCOMES,
  type ApiKeyOutcome,
  LEAKED_KEY_OUTCOMES,
  type LeakedKeyOutcome,
  type RateLimitName,
  SecurityCounters,
  type SignInMethod,
} from './security-counters';

/** Names of the service's own series; HTTP and process series use the usual names. */
export const PREFIX = 'region_keys_api_';

const RATE_LIMITS: readonly RateLimitName[] = ['login', 'signup', 'api_key', 'leak_report'];
const SIGN_IN_METHODS: readonly SignInMethod[] = ['token', 'basic'];

// Most requests take a few milliseconds: finer buckets at the low end than prom-client's default.
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export interface BuildInfo {
  version: string;
  commit: string;
  node: string;
  /** live or sandbox: dashboards that gather both tell them apart. */
  environment: string;
}

export function buildInfo(commit: string | undefined, environment: string): BuildInfo {
  const packageJson = findPackageJSON('./', __filename);
  const version = packageJson
    ? (JSON.parse(readFileSync(packageJson, 'utf8')) as { version?: string }).version
    : undefined;
  return { version: version ?? 'unknown', commit: commit ?? 'unknown', node: process.version, environment };
}

type Child<T> = T extends { labels(...values: string[]): infer C } ? C : never;

/**
 * Every series the service exports, in a registry of its own (several apps in one process,
 * as in tests, do not collide). Counters that features increment are created with all
 * their label values at zero, so that a rate over them exists before the first event.
 */
export class PrometheusMetrics extends SecurityCounters {
  readonly registry = new Registry();

  readonly durations = new RequestDurations(
    'http_server_request_duration_seconds',
    'Time from a request received to its response sent, by method, route template and status class.',
    DURATION_BUCKETS,
    this.registry,
  );

  /**
   * Each series is its histogram series' count, copied at each scrape: a request is counted
   * once, by the histogram, not a second time here: every request pays for each update.
   */
  readonly requests = new Counter({
    name: 'http_server_requests_total',
    help: 'HTTP requests answered, by method, route template and status class.',
    labelNames: ['method', 'route', 'status_class'] as const,
    registers: [this.registry],
    collect: async () => {
      const { values } = await this.durations.get();
      this.requests.reset();
      for (const { metricName, labels, value } of values)
        if (metricName === 'http_server_request_duration_seconds_count') this.requests.inc(labels, value);
    },
  });

  private readonly rateLimitRefusals: Record<RateLimitName, Child<Counter<'limit'>>>;
  private readonly signInFailures: Record<SignInMethod, Child<Counter<'method'>>>;
  private readonly apiKeyAuthentications: Record<ApiKeyOutcome, Child<Counter<'outcome'>>>;
  private readonly leakedKeys: Record<LeakedKeyOutcome, Child<Counter<'outcome'>>>;

  constructor(dataSource: DataSource, build: BuildInfo) {
    super();
    collectDefaultMetrics({ register: this.registry });
    this.rateLimitRefusals = this.counterOf(
      'rate_limit_refusals_total',
      'Requests refused with 429, by the limit that refused them.',
      'limit',
      RATE_LIMITS,
    );
    this.signInFailures = this.counterOf(
      'sign_in_failures_total',
      'Sign-ins with a wrong email or password, by method (token: POST /auth/token; basic: Basic credentials).',
      'method',
      SIGN_IN_METHODS,
    );
    this.apiKeyAuthentications = this.counterOf(
      'api_key_authentications_total',
      'Region API keys presented, by outcome: success, missing, malformed, unknown (never issued, revoked or expired), wrong_environment (a key of the other environment: live or sandbox), address_not_allowed (a valid key used from outside its allowedCidrs), error.',
      'outcome',
      API_KEY_OUTCOMES,
    );
    this.leakedKeys = this.counterOf(
      'leaked_api_keys_total',
      "Active region API keys reported as leaked, by outcome: revoked (at once), flagged (the region's last managing key, kept by the last-key rule: it shows leakReportedAt until the region rolls it).",
      'outcome',
      LEAKED_KEY_OUTCOMES,
    );
    new Gauge({
      name: `${PREFIX}build_info`,
      help: 'Always 1; the labels say which build is running.',
      labelNames: ['version', 'commit', 'node', 'environment'] as const,
      registers: [this.registry],
    }).set({ ...build }, 1);
    this.poolGauges(dataSource);
  }

  rateLimited(limit: RateLimitName): void {
    this.rateLimitRefusals[limit].inc();
  }

  signInFailed(method: SignInMethod): void {
    this.signInFailures[method].inc();
  }

  apiKeyAuthenticated(outcome: ApiKeyOutcome): void {
    this.apiKeyAuthentications[outcome].inc();
  }

  leakedKeyReported(outcome: LeakedKeyOutcome): void {
    this.leakedKeys[outcome].inc();
  }

  private counterOf<L extends string, V extends string>(
    name: string,
    help: string,
    label: L,
    values: readonly V[],
  ): Record<V, Child<Counter<L>>> {
    const counter = new Counter({ name: PREFIX + name, help, labelNames: [label], registers: [this.registry] });
    const children = {} as Record<V, Child<Counter<L>>>;
    for (const value of values) {
      children[value] = counter.labels(value);
      children[value].inc(0);
    }
    return children;
  }

  /**
   * Read from the pg Pool behind TypeORM at each scrape. On the embedded database the pool
   * holds its single session (max 1), and `waiting` counts the queries queued for it.
   */
  private poolGauges(dataSource: DataSource): void {
    const pool = () => poolOf(dataSource);
    new Counter({
      name: `${PREFIX}db_connection_failures_total`,
      help: 'Connection attempts of the database pool that failed, by reason: refused (the server or pooler had no connection slot free; the request waited for a pooled connection) or error (unreachable, timed out, TLS, authentication).',
      labelNames: ['reason'] as const,
      registers: [this.registry],
      collect() {
        const failures = pool()?.connectFailures ?? { refused: 0, failed: 0 };
        this.reset();
        this.inc({ reason: 'refused' }, failures.refused);
        this.inc({ reason: 'error' }, failures.failed);
      },
    });
    const gauge = (name: string, help: string, read: (pool: NonNullable<ReturnType<typeof poolOf>>) => number) =>
      new Gauge({
        name: PREFIX + name,
        help,
        registers: [this.registry],
        collect() {
          const current = pool();
          this.set(current ? read(current) : 0);
        },
      });
    gauge(
      'db_pool_max',
      'Connections the database pool may open (1 on the embedded database).',
      (p) => p.options.max ?? 0,
    );
    gauge('db_pool_connections', 'Connections the database pool holds open, idle or in use.', (p) => p.totalCount);
    gauge('db_pool_idle', 'Open connections of the database pool not in use.', (p) => p.idleCount);
    gauge('db_pool_waiting', 'Queries waiting for a connection of the database pool.', (p) => p.waitingCount);
  }
}
