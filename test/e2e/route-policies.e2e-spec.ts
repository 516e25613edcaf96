import { RequestMethod } from '@nestjs/common';
import { ModulesContainer, Reflector } from '@nestjs/core';
import { AUTH_POLICY } from '../../src/common/auth/auth-policy';
import { requiredPermissionOf } from '../../src/region-keys/region-key-auth.decorator';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Who can reach what, in one table; region-key routes also name the key permission they
 * need (@RequiresPermission), e.g. `region-api-key region:read`. A change to any route's auth policy (or a new route)
 * changes this table, so it shows up in review. Routes without a policy are refused by
 * the AuthPolicyGuard; this test also makes sure there are none.
 */
const EXPECTED: Record<string, string> = {
  'GET /health': 'public',
  'GET /health/live': 'public',
  'GET /health/ready': 'public',
  'GET /auth/regions/me': 'region-api-key region:read',
  'POST /auth/region/api-keys': 'region-api-key keys:write',
  'DELETE /auth/region/api-keys/:id': 'region-api-key keys:write',
  'POST /auth/region/api-keys/:id/roll': 'region-api-key keys:write',
  'GET /auth/region/api-keys/:id/usage': 'region-api-key region:read',
  'GET /auth/region/events': 'region-api-key region:read',
  'POST /user/signup': 'public',
  'POST /auth/token': 'public',
  'GET /me': 'user',
  'GET /planets': 'public',
  'GET /planets/:planetId': 'public',
  'GET /planets/:planetId/image': 'public',
  'POST /planets': 'user',
  'PUT /planets/:planetId': 'user',
  'DELETE /planets/:planetId': 'user',
  'POST /planets/:planetId/image': 'user',
  'POST /celestial-bodies': 'user',
  'GET /problems': 'public',
  'GET /problems/:slug': 'public',
};

function routeTable(t: TestApp): Record<string, string | undefined> {
  const reflector = t.app.get(Reflector);
  const table: Record<string, string | undefined> = {};
  for (const module of t.app.get(ModulesContainer).values()) {
    for (const wrapper of module.controllers.values()) {
      const controller = wrapper.metatype as (new (...args: unknown[]) => object) | undefined;
      if (!controller) continue;
      const base = String(Reflect.getMetadata('path', controller) ?? '').replace(/^\/|\/$/g, '');
      for (const name of Object.getOwnPropertyNames(controller.prototype)) {
        const handler = controller.prototype[name];
        if (typeof handler !== 'function' || Reflect.getMetadata('method', handler) === undefined) continue;
        const verb = RequestMethod[Reflect.getMetadata('method', handler) as number];
        const sub = String(Reflect.getMetadata('path', handler) ?? '').replace(/^\/|\/$/g, '');
        const path = `/${[base, sub].filter(Boolean).join('/')}`;
        const policy = reflector.getAllAndOverride<string>(AUTH_POLICY, [handler, controller]);
        const permission = requiredPermissionOf(handler);
        table[`${verb} ${path}`] = permission ? `${policy} ${permission}` : policy;
      }
    }
  }
  return table;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t.close());

it('lists every route with its auth policy', () => {
  expect(routeTable(t)).toEqual(EXPECTED);
});
