import { jest } from '@jest/globals';

import { ProblemFilter } from '../../src/common/problem/problem.filter';
import { ApiKeyAuthGuard } from '../../src/region-keys/region-key-auth.decorator';
import { expectProblem } from '../support/problems';
import { newRegion, startTestApp, TestApp } from '../support/test-app';

// The cheapest refusals are made in Fastify hooks, before Nest's router runs its guards or
// throws for its exception filter; these tests check they are made there, and answer as before.
let t: TestApp;
// Spied on before the app starts: Nest binds the filter's method when it sets up the routes.
const caught = jest.spyOn(ProblemFilter.prototype, 'catch');
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.close();
  caught.mockRestore();
});
beforeEach(() => caught.mockClear());

describe('unknown routes', () => {
  it('answers an unknown path with a 404 problem without throwing through the exception filter', async () => {
    const res = await t.request({ method: 'GET', url: '/no/such/route?token=secret' });
    expectProblem(res, 404, 'not-found');
    expect(res.json()).toMatchObject({ detail: 'Cannot GET /no/such/route', instance: '/no/such/route' });
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
    expect(caught).not.toHaveBeenCalled();
  });

  it('answers a known path asked with another method with a 405 and Allow, the same way', async () => {
    const res = await t.request({ method: 'PUT', url: '/auth/regions/me' });
    expectProblem(res, 405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(caught).not.toHaveBeenCalled();
  });

  it('answers a path whose id segment is empty as an unknown route, before any guard', async () => {
    const answered: string[] = [];
    for (const method of ['GET', 'PATCH', 'DELETE'])
      for (const url of ['/auth/region/api-keys/', '/auth/region/api-keys/.', '/planets/']) {
        const res = await t.request({ method, url, headers: { 'x-api-key': '' } });
        if (res.statusCode !== 404 && res.statusCode !== 405) answered.push(`${method} ${url} → ${res.statusCode}`);
      }
    expect(answered).toEqual([]);
  });

  it('leaves errors on known routes to the exception filter', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/user/signup',
      headers: { 'content-type': 'application/json' },
      payload: '{"unterminated',
    });
    expectProblem(res, 400);
    expect(caught).toHaveBeenCalledTimes(1);
  });
});

describe('region API key routes', () => {
  const me = (headers: Record<string, string>) => t.request({ method: 'GET', url: '/auth/regions/me', headers });

  it('refuses a missing, malformed or other-environment key before the guard runs', async () => {
    const guard = jest.spyOn(ApiKeyAuthGuard.prototype, 'canActivate');
    for (const headers of [
      {} as Record<string, string>,
      { 'x-api-key': 'rk_malformed' },
      { 'x-api-key': 'rk_test_' + 'A'.repeat(49) },
    ]) {
      const res = await me(headers);
      expectProblem(res, 401);
      expect(res.headers['www-authenticate']).toEqual(expect.any(String));
    }
    expect(guard).not.toHaveBeenCalled();
    guard.mockRestore();
  });

  it('leaves a well-formed key to the guard and Passport, which look it up', async () => {
    const region = await newRegion(t);
    const guard = jest.spyOn(ApiKeyAuthGuard.prototype, 'canActivate');
    expect((await me({ 'x-api-key': region.key })).statusCode).toBe(200);
    expect(guard).toHaveBeenCalledTimes(1);
    guard.mockRestore();
  });
});
