import { readFileSync } from 'node:fs';

import { MetricsServer } from '../../src/common/metrics/metrics-server';
import { NoSecurityCounters, SecurityCounters } from '../../src/common/metrics/security-counters';
import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { expectProblem } from '../support/problems';
import { freePort } from '../support/processes';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { usesPostgresServer } from '../support/test-database';
import { newUser } from '../support/users';

/**
 * Prometheus metrics on their own listener (METRICS_PORT), scraped over real HTTP while the
 * app answers requests.
 */

type Labels = Record<string, string>;
interface Sample {
  name: string;
  labels: Labels;
  value: number;
}

function parse(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) continue;
    const labels: Labels = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[name] = value;
    samples.push({ name: match[1], labels, value: Number(match[3]) });
  }
  return samples;
}

class Scrape {
  constructor(readonly samples: Sample[]) {}

  /** The value of the series with exactly these labels; 0 when it does not exist (yet). */
  value(name: string, labels: Labels = {}): number {
    const wanted = JSON.stringify(Object.entries(labels).sort());
    const found = this.samples.find(
      (s) => s.name === name && JSON.stringify(Object.entries(s.labels).sort()) === wanted,
    );
    return found?.value ?? 0;
  }

  series(name: string): Sample[] {
    return this.samples.filter((s) => s.name === name);
  }
}

describe('metrics', () => {
  let t: TestApp;
  let port: number;
  let region: RegionFixture;

  const metricsUrl = (path = '/metrics') => `http://127.0.0.1:${port}${path}`;
  const scrape = async () => {
    const res = await fetch(metricsUrl());
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return new Scrape(parse(await res.text()));
  };
  const requests = (s: Scrape, method: string, route: string, statusClass: string) =>
    s.value('http_server_requests_total', { method, route, status_class: statusClass });
  const durationCount = (s: Scrape, method: string, route: string, statusClass: string) =>
    s.value('http_server_request_duration_seconds_count', { method, route, status_class: statusClass });

  beforeAll(async () => {
    port = await freePort();
    t = await startTestApp({
      METRICS_PORT: String(port),
      METRICS_HOST: '127.0.0.1',
      LOGIN_FAILURE_LIMIT: '2',
      SIGNUP_RATE_LIMIT: '3',
      GIT_COMMIT: 'abc1234',
    });
    region = await newRegion(t);
  });
  afterAll(async () => t?.close());

  it('counts and times requests by method, route template and status class', async () => {
    const before = await scrape();
    expect(
      (await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } })).statusCode,
    ).toBe(200);
    expect(
      (await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': 'rk_not-a-key' } }))
        .statusCode,
    ).toBe(401);
    const missing = await t.request({ method: 'GET', url: '/planets/7000000' });
    expect(missing.statusCode).toBe(404);
    const after = await scrape();

    expect(requests(after, 'GET', '/auth/regions/me', '2xx') - requests(before, 'GET', '/auth/regions/me', '2xx')).toBe(
      1,
    );
    expect(requests(after, 'GET', '/auth/regions/me', '4xx') - requests(before, 'GET', '/auth/regions/me', '4xx')).toBe(
      1,
    );
    expect(
      durationCount(after, 'GET', '/auth/regions/me', '2xx') - durationCount(before, 'GET', '/auth/regions/me', '2xx'),
    ).toBe(1);
    // The route's template, not the URL: a planet that does not exist is still /planets/:planetId.
    expect(
      requests(after, 'GET', '/planets/:planetId', '4xx') - requests(before, 'GET', '/planets/:planetId', '4xx'),
    ).toBe(1);
    expect(after.series('http_server_requests_total').some((s) => s.labels.route.includes('7000000'))).toBe(false);
    const sum = after.value('http_server_request_duration_seconds_sum', {
      method: 'GET',
      route: '/auth/regions/me',
      status_class: '2xx',
    });
    expect(sum).toBeGreaterThan(0);
  });

  it('counts every unknown URL under one route label, so clients cannot add series', async () => {
    const before = await scrape();
    for (const url of ['/no/such/route/1', '/no/such/route/2', '/no/such/route/3?x=1', '/planets/7/nothing']) {
      expectProblem(await t.request({ method: 'GET', url }), 404);
    }
    expect((await t.request({ method: 'DELETE', url: '/no/such/route/4' })).statusCode).toBe(404);
    const after = await scrape();
    expect(requests(after, 'GET', 'unmatched', '4xx') - requests(before, 'GET', 'unmatched', '4xx')).toBe(4);
    expect(requests(after, 'DELETE', 'unmatched', '4xx') - requests(before, 'DELETE', 'unmatched', '4xx')).toBe(1);
    const routes = new Set(after.series('http_server_requests_total').map((s) => s.labels.route));
    expect([...routes].filter((r) => r.startsWith('/no/') || r.includes('nothing'))).toEqual([]);
  });

  it('counts region key authentications by outcome', async () => {
    const outcome = (s: Scrape, o: string) => s.value('region_keys_api_api_key_authentications_total', { outcome: o });
    const before = await scrape();
    for (const o of ['success', 'missing', 'malformed', 'unknown', 'wrong_environment', 'address_not_allowed', 'error'])
      expect(before.series('region_keys_api_api_key_authentications_total').some((s) => s.labels.outcome === o)).toBe(
        true,
      );
    const me = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/auth/regions/me', headers });
    expect((await me({ 'x-api-key': region.key })).statusCode).toBe(200);
    expect((await me({})).statusCode).toBe(401);
    expect((await me({ 'x-api-key': 'rk_short' })).statusCode).toBe(401);
    expect((await me({ 'x-api-key': generateApiKey() })).statusCode).toBe(401);
    expect((await me({ 'x-api-key': generateApiKey() })).statusCode).toBe(401);
    expect((await me({ 'x-api-key': generateApiKey('sandbox') })).statusCode).toBe(401);
    const after = await scrape();
    expect(outcome(after, 'success') - outcome(before, 'success')).toBe(1);
    expect(outcome(after, 'missing') - outcome(before, 'missing')).toBe(1);
    expect(outcome(after, 'malformed') - outcome(before, 'malformed')).toBe(1);
    expect(outcome(after, 'unknown') - outcome(before, 'unknown')).toBe(2);
    expect(outcome(after, 'wrong_environment') - outcome(before, 'wrong_environment')).toBe(1);
    expect(outcome(after, 'error') - outcome(before, 'error')).toBe(0);
  });

  it('counts failed sign-ins and the 429s of the sign-in limit', async () => {
    const user = await newUser(t);
    const failures = (s: Scrape) => s.value('region_keys_api_sign_in_failures_total', { method: 'token' });
    const refusals = (s: Scrape) => s.value('region_keys_api_rate_limit_refusals_total', { limit: 'login' });
    const before = await scrape();
    const signIn = (password: string) =>
      t.request({ method: 'POST', url: '/auth/token', payload: { email: user.email, password } });
    expect((await signIn('wrong password 1')).statusCode).toBe(401);
    expect((await signIn('wrong password 2')).statusCode).toBe(401);
    expect((await signIn(user.password)).statusCode).toBe(429);
    const after = await scrape();
    expect(failures(after) - failures(before)).toBe(2);
    expect(refusals(after) - refusals(before)).toBe(1);
    expect(after.value('region_keys_api_rate_limit_refusals_total', { limit: 'signup' })).toBe(
      before.value('region_keys_api_rate_limit_refusals_total', { limit: 'signup' }),
    );
    expect(requests(after, 'POST', '/auth/token', '4xx') - requests(before, 'POST', '/auth/token', '4xx')).toBe(3);
  });

  it('counts the 429s of the sign-up limit', async () => {
    const refusals = (s: Scrape) => s.value('region_keys_api_rate_limit_refusals_total', { limit: 'signup' });
    const before = await scrape();
    const statuses = [];
    for (let i = 0; i < 5; i++) {
      const res = await t.request({
        method: 'POST',
        url: '/user/signup',
        payload: { email: `flood-${i}@example.com`, password: 'password-1' },
        remoteAddress: '198.51.100.9',
      });
      statuses.push(res.statusCode);
    }
    expect(statuses).toEqual([201, 201, 201, 429, 429]);
    expect(refusals(await scrape()) - refusals(before)).toBe(2);
  });

  it('reports the database pool, the build, the event loop and memory', async () => {
    const s = await scrape();
    // The embedded database is one session: a pool of one connection.
    expect(s.value('region_keys_api_db_pool_max')).toBe(usesPostgresServer() ? 10 : 1);
    expect(s.value('region_keys_api_db_pool_connections')).toBeGreaterThanOrEqual(1);
    expect(s.value('region_keys_api_db_pool_idle')).toBeGreaterThanOrEqual(0);
    expect(s.series('region_keys_api_db_pool_waiting')).toHaveLength(1);
    const { version } = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string };
    expect(
      s.value('region_keys_api_build_info', { version, commit: 'abc1234', node: process.version, environment: 'live' }),
    ).toBe(1);
    expect(s.series('nodejs_eventloop_lag_seconds')).toHaveLength(1);
    expect(s.value('process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(s.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
  });

  it('serves /metrics on the metrics port only, and nothing else there', async () => {
    expectProblem(await t.request({ method: 'GET', url: '/metrics' }), 404);
    for (const path of ['/', '/health', '/auth/regions/me', '/docs', '/metrics/x', '/metricsx']) {
      const res = await fetch(metricsUrl(path));
      expect([path, res.status]).toEqual([path, 404]);
      expect(await res.text()).toBe('Not found. This port serves GET /metrics only.\n');
    }
    const post = await fetch(metricsUrl(), { method: 'POST' });
    expect(post.status).toBe(405);
    expect(post.headers.get('allow')).toBe('GET, HEAD');
    expect(t.logs.some((line) => line.includes(`Metrics on http://127.0.0.1:${port}/metrics`))).toBe(true);
  });
});

describe('METRICS_PORT=0', () => {
  it('turns metrics off: no listener, nothing counted', async () => {
    const t = await startTestApp({ METRICS_PORT: '0' });
    try {
      expect(() => t.app.get(MetricsServer, { strict: false })).toThrow();
      expect(t.app.get(SecurityCounters, { strict: false })).toBeInstanceOf(NoSecurityCounters);
      expect(t.logs.some((line) => line.includes('Metrics on'))).toBe(false);
      expectProblem(await t.request({ method: 'GET', url: '/metrics' }), 404);
    } finally {
      await t.close();
    }
  });
});
