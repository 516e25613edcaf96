import { appRoutes, type OpenApiDocument, openApiPath } from '../support/routes';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Who can reach what, in one table; region-key routes also name the key permission they
 * need (@RegionKeyAuth(permission)), e.g. `region-api-key region:read`. A change to any
 * route's auth policy (or a new route) changes this table, so it shows up in review. Routes
 * without a policy are refused by the AuthPolicyGuard; this test also makes sure there are none.
 */
const EXPECTED: Record<string, string> = {
  'GET /health': 'public',
  'GET /health/live': 'public',
  'GET /health/ready': 'public',
  'GET /auth/regions/me': 'region-api-key region:read',
  'POST /auth/region/api-keys': 'region-api-key keys:write',
  'GET /auth/region/api-keys/current': 'region-api-key any',
  'GET /auth/region/api-keys/:id': 'region-api-key region:read',
  'PATCH /auth/region/api-keys/:id': 'region-api-key keys:write',
  'DELETE /auth/region/api-keys/:id': 'region-api-key keys:write',
  'POST /auth/region/api-keys/:id/roll': 'region-api-key keys:write',
  'GET /auth/region/api-keys/:id/usage': 'region-api-key region:read',
  'GET /auth/region/api-keys/:id/clients': 'region-api-key region:read',
  'POST /auth/region/api-keys/leaked': 'public',
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
  return Object.fromEntries(
    appRoutes(t.app).map((r) => [r.key, r.permission ? `${r.policy} ${r.permission}` : r.policy]),
  );
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => t?.close());

it('lists every route with its auth policy', () => {
  expect(routeTable(t)).toEqual(EXPECTED);
});

// The soak (bench/soak.mjs) reads the routes from the served document: it must hold them all.
it('documents every route in the OpenAPI document, and no other', async () => {
  const document = (await t.request({ method: 'GET', url: '/docs-json' })).json<OpenApiDocument>();
  const documented = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
  );
  const routes = appRoutes(t.app).map((r) => `${r.method} ${openApiPath(r.path)}`);
  expect(documented.sort()).toEqual(routes.sort());
});
