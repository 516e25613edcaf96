import { Writable } from 'node:stream';

import { afterEach, beforeEach, jest } from '@jest/globals';
import type { Type } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { InjectOptions, Response } from 'light-my-request';

import { createApp } from '../../src/app';
import { Clock } from '../../src/common/clock/clock';
import { loadConfig } from '../../src/config/app-config';
import { FEATURE_SETTINGS } from '../../src/feature-settings';
import { RegionKeysService } from '../../src/region-keys/region-keys.service';
import { loadOpenApiMetadata } from './openapi-metadata';
import { OpenApiResponseValidator } from './openapi-validator';
import { createTestDatabase, TestDatabase } from './test-database';

export interface TestApp {
  app: NestFastifyApplication;
  /** Every log line the app wrote, as text. */
  logs: string[];
  /** An in-process HTTP request; the response is checked against the OpenAPI document. */
  request(options: InjectOptions): Promise<Response>;
  close(): Promise<void>;
}

export const TEST_ENV: Record<string, string> = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'info',
  // Tests create their regions with the factories below; a banner is of no use here.
  INITIAL_REGION_API_KEY: 'operator-chosen-initial-key-0123456789abcdef',
  // bcrypt's cheapest cost: hashing at 12 would take most of the test time.
  BCRYPT_COST: '4',
  // Suites create many users from one address; rate-limit tests set their own limits.
  SIGNUP_RATE_LIMIT: '100000',
  LOGIN_FAILURE_LIMIT: '100000',
  LOGIN_ADDRESS_FAILURE_LIMIT: '100000',
  // Suites send many requests with one key; the per-key limit's tests set their own.
  REGION_KEY_RATE_LIMIT: '100000/1',
  // Leak reports likewise; and answered at once (the floor that hides their timing is the leaked-keys suite's).
  LEAK_REPORT_RATE_LIMIT: '100000',
  LEAK_REPORT_MIN_ANSWER_MS: '0',
  // Deterministic planet lists; the sample-data test turns seeding on itself.
  SEED_SAMPLE_DATA: 'false',
  // Suites run side by side: a metrics test chooses its own port.
  METRICS_PORT: '0',
};

/** Boots the real AppModule on a fresh database. `env` overrides settings; `modules` are imported besides the features. */
export async function startTestApp(
  env: Record<string, string> = {},
  database?: TestDatabase,
  modules?: Type[],
): Promise<TestApp> {
  const db = database ?? (await createTestDatabase());
  const logs: string[] = [];
  const logDestination = new Writable({
    write(chunk, _encoding, done) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const config = loadConfig({ ...TEST_ENV, ...db.env, ...env }, FEATURE_SETTINGS);
  let app: NestFastifyApplication;
  try {
    await loadOpenApiMetadata();
    // A failed start closes what it opened (createApp), so the test fails at once with its error.
    app = await createApp({ config, logDestination, modules });
  } catch (err) {
    if (!database) await db.drop();
    throw err;
  }
  // Every response a test receives must be one the OpenAPI document promises.
  const validator = new OpenApiResponseValidator((await app.inject({ method: 'GET', url: '/docs-json' })).json());
  return {
    app,
    logs,
    request: async (options) => {
      const res = await app.inject(options);
      validator.check(options.method ?? 'GET', String(options.url), res);
      return res;
    },
    close: async () => {
      await app.close();
      if (!database) await db.drop();
    },
  };
}

export interface RegionFixture {
  regionId: string;
  keyId: string;
  key: string;
}

/** A region with one key, created as an operator would (not over HTTP). */
export async function newRegion(t: TestApp, name = 'Test region'): Promise<RegionFixture> {
  const { region, apiKey, key } = await t.app.get(RegionKeysService).createRegion(name, 'first key');
  return { regionId: region.id, keyId: apiKey.id, key };
}

/** Creates a key over HTTP with `key` and returns the response body. */
export async function createKey(t: TestApp, key: string, description?: string) {
  const res = await t.request({
    method: 'POST',
    url: '/auth/region/api-keys',
    headers: { 'x-api-key': key },
    payload: description === undefined ? {} : { description },
  });
  expect(res.statusCode).toBe(201);
  return res.json<{ id: string; key: string; tokenPreview: string; description: string | null }>();
}

export interface TwoApps {
  a: TestApp;
  b: TestApp;
  database: TestDatabase;
  close(): Promise<void>;
}

/** Two apps on one fresh database, as two replicas of the service would run. */
export async function twoInstances(env: Record<string, string> = {}): Promise<TwoApps> {
  const database = await createTestDatabase();
  const a = await startTestApp(env, database);
  const b = await startTestApp(env, database);
  return {
    a,
    b,
    database,
    close: async () => {
      await a.close();
      await b.close();
      await database.drop();
    },
  };
}

/**
 * Holds the app's clock still from the start of each test (registered as a beforeEach, so
 * before the file's own); `later(ms)` moves it and `now()` is the time the app sees. For
 * times that must be checked exactly, such as revokesAt and expiresAt.
 */
export function stillClock(app: () => TestApp): { now: () => Date; later: (ms: number) => void } {
  let now = new Date();
  beforeEach(() => {
    now = new Date();
    jest.spyOn(app().app.get(Clock), 'now').mockImplementation(() => new Date(now));
  });
  afterEach(() => {
    jest.restoreAllMocks();
  });
  return {
    now: () => now,
    later: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  };
}
