/**
 * A client written for the Galaxy, not for this API: openapi-fetch over types generated from
 * the Galaxy 0.6.12 document itself (test/fixtures/galaxy/, into generated/galaxy.d.ts), with
 * bodies shaped as those types and the document's examples shape them: a Planet with its
 * readOnly `id` and `lastUpdated`, a `creator`, further physicalProperties; a satellite
 * whose orbit.planet is a whole Planet. It runs the Galaxy's flows against this server, and
 * each call gets the answer this server promises such a client (docs/api.md, "Clients
 * written for the Galaxy"): a success, or one of the refusals by design, asserted here with
 * the reason the problem gives. test/e2e/galaxy-client.e2e-spec.ts generates the types,
 * compiles this under --strict, runs it, and checks every success it recorded against the
 * Galaxy's schemas.
 *
 * Environment: API_BASE_URL, REGION_API_KEY, EXCHANGES_FILE.
 */
import { writeFileSync } from 'node:fs';

import createClient from 'openapi-fetch';

import { exchanges, recorder, running } from '../exchange';
import type { components, paths } from './generated/galaxy';

type Planet = components['schemas']['Planet'];
type Satellite = components['schemas']['Satellite'];
type Api = ReturnType<typeof createClient<paths>>;

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

const baseUrl = env('API_BASE_URL');
const client = (headers: Record<string, string> = {}): Api => {
  const api = createClient<paths>({ baseUrl, headers });
  api.use(recorder);
  return api;
};

interface Answer {
  data?: unknown;
  error?: unknown;
  response: Response;
}

async function expectStatus<A extends Answer>(call: Promise<A>, status: number, what: string): Promise<A> {
  const answer = await call;
  if (answer.response.status !== status) {
    throw new Error(`${what}: expected ${status}, got ${answer.response.status} ${JSON.stringify(answer.error)}`);
  }
  return answer;
}

/** The data of a success with this status. */
async function expectData<A extends Answer>(
  call: Promise<A>,
  status: number,
  what: string,
): Promise<NonNullable<A['data']>> {
  const { data } = await expectStatus(call, status, what);
  if (data === undefined || data === null) throw new Error(`${what}: ${status} without a body`);
  return data;
}

/** A refusal by design: this status, and a problem whose text says why (`reason`). */
async function expectRefusal(call: Promise<Answer>, status: number, reason: RegExp, what: string): Promise<void> {
  const { error, response } = await expectStatus(call, status, what);
  if (!(response.headers.get('content-type') ?? '').startsWith('application/problem+json')) {
    throw new Error(`${what}: the refusal is not a problem document`);
  }
  const text = JSON.stringify(error);
  if (!reason.test(text)) throw new Error(`${what}: the problem does not say ${reason}: ${text}`);
}

function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`${what}: not so`);
}

/** A Planet as the Galaxy's types make a client build it: `id` and `lastUpdated` are required or offered. */
const mars = (name: string): Planet => ({
  id: 0,
  name,
  description: 'The red planet',
  type: 'terrestrial',
  habitabilityIndex: 0.68,
  // openapi-typescript types these two as an object and an index signature of numbers (or
  // strings) at once, which no object with a temperature (or a percentage) satisfies: a
  // client written for the Galaxy casts them, as here.
  physicalProperties: {
    mass: 0.107,
    radius: 0.532,
    gravity: 0.378,
    temperature: { min: 130, max: 308, average: 210 },
    magneticField: 0.0001,
    albedo: 0.25,
  } as unknown as NonNullable<Planet['physicalProperties']>,
  atmosphere: [{ compound: 'CO2', percentage: 95.3 }] as unknown as NonNullable<Planet['atmosphere']>,
  discoveredAt: '1610-01-07T00:00:00Z',
  image: null,
  satellites: [],
  creator: { id: 1, name: 'Marc' },
  tags: ['solar-system', 'rocky', 'explored'],
  lastUpdated: '2024-01-15T14:30:00Z',
});

async function users(anyone: Api): Promise<{ basic: Api; bearer: Api }> {
  // The Galaxy's own example "Hans" has a 6-byte password: refused by design.
  await expectRefusal(
    anyone.POST('/user/signup', { body: { name: 'Hans', email: 'hans@scalar.com', password: '5c4l4r' } }),
    400,
    /password/,
    'sign-up with a password under 8 bytes',
  );
  const credentials = { email: 'marc@scalar.com', password: 'i-love-scalar' };
  const user = await expectData(
    anyone.POST('/user/signup', { body: { name: 'Marc', ...credentials } }),
    201,
    'sign-up',
  );
  check(user.name === 'Marc', 'sign-up answers the user');
  const { token } = await expectData(anyone.POST('/auth/token', { body: credentials }), 201, 'token');
  check(typeof token === 'string', 'a token');

  const basic = client({
    Authorization: `Basic ${Buffer.from(`${credentials.email}:${credentials.password}`).toString('base64')}`,
  });
  const bearer = client({ Authorization: `Bearer ${token ?? ''}` });
  for (const [api, how] of [
    [basic, 'Basic'],
    [bearer, 'Bearer'],
  ] as const) {
    const me = await expectData(api.GET('/me'), 200, `/me with ${how}`);
    check(me.id === user.id, `/me with ${how} is the user signed up`);
  }
  // The Galaxy's /me also lists API keys and OAuth2; here a region API key never authenticates
  // a user route, and no OAuth2 token is issued or accepted.
  await expectRefusal(
    client({ 'X-API-Key': env('REGION_API_KEY') }).GET('/me'),
    401,
    /unauthenticated/,
    '/me with a region API key',
  );
  await expectRefusal(
    client({ Authorization: 'Bearer an-oauth2-access-token' }).GET('/me'),
    401,
    /unauthenticated/,
    '/me with an OAuth2 access token',
  );
  return { basic, bearer };
}

async function planets(api: Api, anyone: Api): Promise<void> {
  const created = await expectData(api.POST('/planets', { body: mars('Mars') }), 201, 'create a Planet as typed');
  check(created.id > 0 && created.name === 'Mars', 'the readOnly id sent is ignored: the server gives one');
  check(created.physicalProperties?.['magneticField'] === 0.0001, 'further physicalProperties are kept');
  for (const name of ['Jupiter', 'Saturn']) await expectData(api.POST('/planets', { body: mars(name) }), 201, name);

  await expectRefusal(
    api.POST('/planets', { body: { ...mars('Callback'), successCallbackUrl: 'https://example.com/webhook' } }),
    400,
    /successCallbackUrl is not supported/,
    'a callback URL',
  );
  await expectStatus(
    api.POST('/planets', {
      body: mars('Xml'),
      bodySerializer: () => '<planet><id>1</id><name>Xml</name></planet>',
      headers: { 'Content-Type': 'application/xml' },
    }),
    415,
    'an XML body',
  );

  // Paging: two at a time, following meta.next, and a limit past the server's maximum.
  const seen: string[] = [];
  let query: { limit: number; offset: number } | undefined = { limit: 2, offset: 0 };
  while (query) {
    const page: components['schemas']['PaginatedResource'] = await expectData(
      anyone.GET('/planets', { params: { query } }),
      200,
      'a page of planets',
    );
    seen.push(...(page.data as Planet[]).map((p) => p.name));
    const next: string | null | undefined = page.meta?.next;
    const params: URLSearchParams | undefined = next ? new URL(next, baseUrl).searchParams : undefined;
    query = params ? { limit: Number(params.get('limit')), offset: Number(params.get('offset')) } : undefined;
  }
  check(
    ['Mars', 'Jupiter', 'Saturn'].every((name) => seen.includes(name)),
    'paging reaches every planet',
  );
  const big = await expectData(anyone.GET('/planets', { params: { query: { limit: 1000 } } }), 200, 'limit=1000');
  check(big.meta?.limit === 100, 'a limit above 100 is served as 100, and meta.limit says so');

  const planetId = created.id;
  const path = { params: { path: { planetId } } };
  const read = await expectData(anyone.GET('/planets/{planetId}', path), 200, 'get the planet');
  const updated = await expectData(
    api.PUT('/planets/{planetId}', { ...path, body: { ...read, name: 'Mars II' } }),
    200,
    'update with the planet as read (its own id)',
  );
  check(updated.name === 'Mars II', 'the update is made');
  await expectRefusal(
    api.PUT('/planets/{planetId}', { ...path, body: { ...read, id: planetId + 1000 } }),
    400,
    /id must be/,
    'update with another planet id in the body',
  );

  const phobos: Satellite = {
    id: 0,
    name: 'Phobos',
    description: 'Phobos is the larger and innermost of the two moons of Mars.',
    diameter: 22.2,
    type: 'moon',
    orbit: { planet: updated, orbitalPeriod: 0.319, distance: 9376 },
  };
  const moon = await expectData(
    api.POST('/celestial-bodies', { body: phobos }),
    201,
    'a satellite, orbit.planet a Planet',
  );
  check(moon.name === 'Phobos', 'the satellite is made');
  const { orbit: _orbit, ...adrift } = phobos;
  await expectRefusal(
    api.POST('/celestial-bodies', { body: adrift }),
    400,
    /must orbit a planet/,
    'a satellite without orbit',
  );
  const body = await expectData(api.POST('/celestial-bodies', { body: mars('Venus') }), 201, 'a planet as a body');
  check(body.name === 'Venus', 'the celestial body is a planet');

  await expectStatus(api.DELETE('/planets/{planetId}', path), 204, 'delete the planet');
  await expectStatus(anyone.GET('/planets/{planetId}', path), 404, 'the planet is gone');
}

async function main(): Promise<void> {
  running.feature = 'galaxy';
  const anyone = client();
  try {
    const { basic, bearer } = await users(anyone);
    await planets(bearer, anyone);
    await expectData(basic.GET('/me'), 200, '/me again with Basic');
  } finally {
    writeFileSync(env('EXCHANGES_FILE'), JSON.stringify(exchanges));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
