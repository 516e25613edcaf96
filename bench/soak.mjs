// Soak: mixed traffic on every route against the compiled server (npm run build first;
// `npm run soak` does), on a PostgreSQL database of its own (created, then dropped) with
// rate-limit counters in Redis (under a key prefix of its own, removed at the end).
// Every minute it reports requests, errors, p50/p99 latency, the server's resident memory
// and its connections to the database; at the end it compares table counts with what the
// client made. It exits non-zero on any error (a 5xx, any status other than the one
// expected, a failed request, an error logged by the server) or count mismatch. One 5xx is
// part of the contract: an upload that finds every store slot taken is refused with 503 and
// Retry-After; the client waits and sends it again, and counts those refusals. The routes
// are the server's own (its OpenAPI document): a route without an operation below stops
// the soak before it starts, and one that no request reached fails it.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run soak      # 1 minute
//   SOAK_MINUTES=15 DATABASE_URL=… npm run soak                                 # by hand
//   SOAK_CONCURRENCY=16 REDIS_URL=redis://127.0.0.1:6379 SOAK_BCRYPT_COST=10
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import { Redis } from 'ioredis';
import pg from 'pg';
import { serveCommand } from './lib/service.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 1);
const CONCURRENCY = Number(process.env.SOAK_CONCURRENCY ?? 16);
const BCRYPT_COST = process.env.SOAK_BCRYPT_COST ?? '10';
const serverUrl = process.env.DATABASE_URL;
const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
if (!serverUrl) {
  console.error(
    'The soak runs on a PostgreSQL server: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/postgres).',
  );
  process.exit(2);
}

// The server keeps the number of keys below the region's limit of 100 and above a floor,
// and never deletes planets below a floor, so that every request has one right answer.
const MAX_LIVE_KEYS = 90;
const MIN_LIVE_KEYS = 5;
const MIN_PLANETS = 5;
const APP_NAME = 'region-keys-api/%';

const freePort = () =>
  new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });

async function admin(sql, params) {
  const client = new pg.Client({ connectionString: serverUrl, application_name: 'soak-admin' });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

// ---------------------------------------------------------------------------------------
// The server

const soakDb = `soak_${randomBytes(4).toString('hex')}`;
const redisPrefix = `soak-${randomBytes(4).toString('hex')}:`;
await admin(`CREATE DATABASE "${soakDb}"`);
const dbUrl = new URL(serverUrl);
dbUrl.pathname = `/${soakDb}`;
const initialKey = `soak-initial-${randomBytes(24).toString('hex')}`;
const port = await freePort();
// As `npm run serve` starts it.
const serve = serveCommand('.');
const server = spawn(process.execPath, [...serve.flags, 'dist/src/main.js'], {
  env: {
    ...process.env,
    ...serve.env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbUrl.toString(),
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: redisPrefix,
    INITIAL_REGION_API_KEY: initialKey,
    JWT_SECRET: randomBytes(32).toString('hex'),
    BCRYPT_COST,
    // A soak of every route from one address, not a test of the limits.
    SIGNUP_RATE_LIMIT: '100000000',
    LOGIN_FAILURE_LIMIT: '100000000',
    LOGIN_ADDRESS_FAILURE_LIMIT: '100000000',
    REGION_KEY_RATE_LIMIT: '100000/1',
    SEED_SAMPLE_DATA: 'false',
  },
  stdio: ['ignore', 'pipe', 'pipe'],
});
let serverExit = null;

/** Stops the server (SIGTERM, as an operator would) and removes the soak's database and Redis keys. */
async function stopAndClean() {
  server.kill('SIGTERM');
  const exit = await Promise.race([exited, new Promise((r) => setTimeout(() => r({ code: 'timeout' }), 15_000))]);
  if (exit.code === 'timeout') server.kill('SIGKILL');
  await admin(`DROP DATABASE IF EXISTS "${soakDb}" WITH (FORCE)`);
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    const stale = await redis.keys(`${redisPrefix}*`);
    if (stale.length) await redis.del(...stale);
  } finally {
    redis.disconnect();
  }
  return exit;
}
process.once('SIGINT', () => stopAndClean().finally(() => process.exit(130)));
const exited = new Promise((resolve) =>
  server.once('exit', (code, signal) => resolve((serverExit = { code, signal }))),
);
const serverErrors = [];
let busyUploadLines = 0;
function isBusyUploadLine(line) {
  try {
    const { req, res } = JSON.parse(line);
    return req?.method === 'POST' && /^\/planets\/\d+\/image$/.test(req.path) && res?.statusCode === 503;
  } catch {
    return false;
  }
}
for (const stream of [server.stdout, server.stderr]) {
  createInterface({ input: stream }).on('line', (line) => {
    let level = 0;
    try {
      level = JSON.parse(line).level ?? 0;
    } catch {
      level = stream === server.stderr ? 50 : 0;
    }
    if (level < 50) return;
    // An upload refused because every store slot was taken is answered 503 by design and
    // logged at error like any 5xx; the client counts those refusals (uploadsBusy) and the
    // two counts must agree.
    if (isBusyUploadLine(line)) busyUploadLines++;
    else serverErrors.push(line.slice(0, 500));
  });
}
const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  try {
    if ((await fetch(`${base}/health`)).ok) break;
  } catch {}
  if (serverExit || i > 300) {
    await stopAndClean();
    throw new Error(`server did not start (${JSON.stringify(serverExit)})\n${serverErrors.join('\n')}`);
  }
  await new Promise((r) => setTimeout(r, 100));
}

// The server's routes, from the document it serves (the route-policies test holds the
// document to the app's routes): every one must get traffic below.
const document = await (await fetch(`${base}/docs-json`)).json();
const ROUTES = Object.entries(document.paths).flatMap(([path, item]) =>
  Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`),
);
const problemSlugs = document['x-problem-types'].map(({ type }) => type.split('/').pop());

// ---------------------------------------------------------------------------------------
// What the client knows, and so what each answer must be

const image = readFileSync(new URL('../test/fixtures/mars.png', import.meta.url));
const keys = [{ id: null, key: initialKey, inUse: 0, permanent: true }];
let pendingKeyCreates = 0;
const users = [];
const planets = [];
const made = { keysRevoked: 0, users: 0, planetsCreated: 0, planetsDeleted: 0 };

const pick = (list) => list[Math.floor(Math.random() * list.length)];
const use = (item) => {
  item.inUse++;
  return item;
};
const release = (item) => item.inUse--;
/** Uploads in progress, by user: the server allows each user two (UPLOADS_PER_USER in src/celestial-bodies/upload-slots.ts). */
const UPLOADS_PER_USER = 2;
/** The satellites a planet may have (MAX_SATELLITES_PER_PLANET in src/celestial-bodies/celestial-body-types.ts). */
const SATELLITES_PER_PLANET = 25;
const uploadsOf = new Map();

/** A key, user or planet that no request is using, taken out of its list (to delete it). */
function takeIdle(list, floor) {
  const idle = list.filter((x) => x.inUse === 0 && !x.permanent);
  if (list.length <= floor || idle.length === 0) return null;
  const chosen = pick(idle);
  list.splice(list.indexOf(chosen), 1);
  return chosen;
}

const json = (body) => ({ body: JSON.stringify(body), headers: { 'content-type': 'application/json' } });
const basic = (u) => `Basic ${Buffer.from(`${u.email}:${u.password}`).toString('base64')}`;
const asUser = (u) => (Math.random() < 0.5 ? basic(u) : `Bearer ${u.token}`);

function form(bytes) {
  const boundary = `soak${randomBytes(8).toString('hex')}`;
  const body = Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="image"; filename="planet.png"\r\nContent-Type: image/png\r\n\r\n`,
    ),
    bytes,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { body, headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}

async function signUp() {
  const u = {
    email: `soak-${randomUUID()}@example.com`,
    password: `pw-${randomBytes(9).toString('base64url')}`,
    inUse: 0,
  };
  const res = await call('POST /user/signup', [201], '/user/signup', {
    method: 'POST',
    ...json({ name: 'Soak', email: u.email, password: u.password }),
  });
  if (!res) return;
  made.users++;
  u.id = res.body.id;
  const issued = await call('POST /auth/token', [201], '/auth/token', {
    method: 'POST',
    ...json({ email: u.email, password: u.password }),
  });
  if (!issued) return;
  u.token = issued.body.token;
  users.push(u);
}

async function createKey() {
  if (keys.length + pendingKeyCreates >= MAX_LIVE_KEYS)
    return call('GET /auth/regions/me', [200], '/auth/regions/me', { apiKey: initialKey });
  pendingKeyCreates++;
  const k = use(pick(keys));
  const res = await call('POST /auth/region/api-keys', [201], '/auth/region/api-keys', {
    method: 'POST',
    ...json({ description: 'soak' }),
    apiKey: k.key,
  });
  release(k);
  pendingKeyCreates--;
  if (res) keys.push({ id: res.body.id, key: res.body.key, inUse: 0 });
}

async function createPlanet() {
  const owner = use(pick(users));
  const res = await call('POST /planets', [201], '/planets', {
    method: 'POST',
    ...json({
      name: `Soak ${randomBytes(3).toString('hex')}`,
      type: 'terrestrial',
      habitabilityIndex: Math.random(),
      tags: ['soak'],
    }),
    auth: asUser(owner),
  });
  release(owner);
  if (!res) return;
  made.planetsCreated++;
  planets.push({ id: res.body.id, owner, inUse: 0, hasImage: false, satellites: 0 });
}

/**
 * Each operation with its weight and the route it exercises. Each knows the one status (or
 * the two) it must get. Every route the server has needs one: the run refuses to start
 * without, and fails when a route got no request. Each entry starts [weight, 'METHOD /path',
 * as test/unit/soak-operations.spec.ts reads them, to hold the list to openapi.json.
 */
const OPERATIONS = [
  [3, 'GET /health', () => call('GET /health', [200], '/health')],
  [1, 'GET /health/live', () => call('GET /health/live', [200], '/health/live')],
  [1, 'GET /health/ready', () => call('GET /health/ready', [200], '/health/ready')],
  [0.5, 'GET /problems', () => call('GET /problems', [200], '/problems')],
  [0.5, 'GET /problems/{slug}', () => call('GET /problems/{slug}', [200], `/problems/${pick(problemSlugs)}`)],
  [
    10,
    'GET /auth/regions/me',
    async () => {
      const k = use(pick(keys));
      await call('GET /auth/regions/me', [200], '/auth/regions/me', { apiKey: k.key });
      release(k);
    },
  ],
  [
    1,
    'GET /auth/regions/me',
    () =>
      call('GET /auth/regions/me (bad key)', [401], '/auth/regions/me', {
        apiKey: `rk_${randomBytes(20).toString('hex')}`,
      }),
  ],
  [4, 'POST /auth/region/api-keys', createKey],
  [
    4,
    'DELETE /auth/region/api-keys/{id}',
    async () => {
      const victim = takeIdle(keys, MIN_LIVE_KEYS);
      if (!victim) return call('GET /health', [200], '/health');
      const k = use(pick(keys));
      const res = await call('DELETE /auth/region/api-keys/{id}', [204], `/auth/region/api-keys/${victim.id}`, {
        method: 'DELETE',
        apiKey: k.key,
      });
      release(k);
      if (res) made.keysRevoked++;
      else keys.push(victim);
    },
  ],
  [
    1,
    'DELETE /auth/region/api-keys/{id}',
    () =>
      call('DELETE /auth/region/api-keys/{id} (unknown)', [404], `/auth/region/api-keys/${randomUUID()}`, {
        method: 'DELETE',
        apiKey: initialKey,
      }),
  ],
  [
    2,
    'POST /auth/region/api-keys/{id}/roll',
    async () => {
      const old = takeIdle(keys, MIN_LIVE_KEYS);
      if (!old) return call('GET /health', [200], '/health');
      const k = use(pick(keys));
      // Revoked at once, so that the old key's row counts as revoked when the tables are compared.
      const res = await call('POST /auth/region/api-keys/{id}/roll', [201], `/auth/region/api-keys/${old.id}/roll`, {
        method: 'POST',
        ...json({ revokeOldAfterSeconds: 0 }),
        apiKey: k.key,
      });
      release(k);
      if (!res) return keys.push(old);
      made.keysRevoked++;
      keys.push({ id: res.body.id, key: res.body.key, inUse: 0 });
    },
  ],
  [
    2,
    'GET /auth/region/api-keys/{id}',
    async () => {
      const k = use(pick(keys));
      const target = use(pick(keys));
      await call('GET /auth/region/api-keys/{id}', [200], `/auth/region/api-keys/${target.id}`, { apiKey: k.key });
      release(target);
      release(k);
    },
  ],
  [
    2,
    'PATCH /auth/region/api-keys/{id}',
    async () => {
      const k = use(pick(keys));
      const target = use(pick(keys));
      // Read, then change that version (If-Match): another change of the same key in between is a 412.
      const read = await call('GET /auth/region/api-keys/{id}', [200], `/auth/region/api-keys/${target.id}`, {
        apiKey: k.key,
      });
      if (read) {
        const body = { description: `soak ${randomBytes(3).toString('hex')}` };
        await call('PATCH /auth/region/api-keys/{id}', [200, 412], `/auth/region/api-keys/${target.id}`, {
          method: 'PATCH',
          body: JSON.stringify(body),
          headers: { 'content-type': 'application/merge-patch+json', 'if-match': read.etag },
          apiKey: k.key,
        });
      }
      release(target);
      release(k);
    },
  ],
  [
    2,
    'GET /auth/region/api-keys/{id}/usage',
    async () => {
      const k = use(pick(keys));
      // Any key of the region answers, revoked ones too.
      await call(
        'GET /auth/region/api-keys/{id}/usage',
        [200],
        `/auth/region/api-keys/${pick(keys).id}/usage?${
          Math.random() < 0.25 ? 'granularity=hour' : `days=${1 + Math.floor(Math.random() * 90)}`
        }`,
        { apiKey: k.key },
      );
      release(k);
    },
  ],
  [
    1,
    'GET /auth/region/api-keys/{id}/clients',
    async () => {
      const k = use(pick(keys));
      await call('GET /auth/region/api-keys/{id}/clients', [200], `/auth/region/api-keys/${pick(keys).id}/clients`, {
        apiKey: k.key,
      });
      release(k);
    },
  ],
  [
    1,
    'GET /auth/region/api-keys/current',
    async () => {
      const k = use(pick(keys));
      await call('GET /auth/region/api-keys/current', [200], '/auth/region/api-keys/current', { apiKey: k.key });
      release(k);
    },
  ],
  [
    1,
    'POST /auth/region/api-keys/leaked',
    // Keys that were never issued: the soak's own keys stay. From one address, the limit (60 an hour) answers most.
    () =>
      call('POST /auth/region/api-keys/leaked', [202, 429], '/auth/region/api-keys/leaked', {
        method: 'POST',
        ...json({ keys: [`rk_${randomBytes(20).toString('hex')}`] }),
      }),
  ],
  [
    2,
    'GET /auth/region/events',
    async () => {
      const k = use(pick(keys));
      const page = await call(
        'GET /auth/region/events',
        [200],
        `/auth/region/events?limit=${1 + Math.floor(Math.random() * 100)}`,
        {
          apiKey: k.key,
        },
      );
      if (page?.body.meta.next)
        await call('GET /auth/region/events (next page)', [200], `/auth/region/events?cursor=${page.body.meta.next}`, {
          apiKey: k.key,
        });
      release(k);
    },
  ],
  [3, 'POST /user/signup', signUp],
  [
    0.5,
    'POST /user/signup',
    () =>
      call('POST /user/signup (taken)', [409], '/user/signup', {
        method: 'POST',
        ...json({ email: pick(users).email, password: 'another-password' }),
      }),
  ],
  [
    3,
    'POST /auth/token',
    () => {
      const u = pick(users);
      return call('POST /auth/token', [201], '/auth/token', {
        method: 'POST',
        ...json({ email: u.email, password: u.password }),
      });
    },
  ],
  [
    1,
    'POST /auth/token',
    () =>
      call('POST /auth/token (wrong)', [401], '/auth/token', {
        method: 'POST',
        ...json({ email: pick(users).email, password: 'wrong-password' }),
      }),
  ],
  [5, 'GET /me', () => call('GET /me (Basic)', [200], '/me', { auth: basic(pick(users)) })],
  [5, 'GET /me', () => call('GET /me (Bearer)', [200], '/me', { auth: `Bearer ${pick(users).token}` })],
  [
    8,
    'GET /planets',
    () =>
      call(
        'GET /planets',
        [200],
        `/planets?limit=${1 + Math.floor(Math.random() * 100)}&offset=${Math.floor(Math.random() * 50)}`,
      ),
  ],
  [
    6,
    'GET /planets/{planetId}',
    async () => {
      const p = use(pick(planets));
      await call('GET /planets/{planetId}', [200], `/planets/${p.id}`);
      release(p);
    },
  ],
  [
    1,
    'GET /planets/{planetId}',
    () =>
      call('GET /planets/{planetId} (unknown)', [404], `/planets/${2_000_000_000 + Math.floor(Math.random() * 1000)}`),
  ],
  [4, 'POST /planets', createPlanet],
  [
    3,
    'PUT /planets/{planetId}',
    async () => {
      const p = use(pick(planets));
      await call('PUT /planets/{planetId}', [200], `/planets/${p.id}`, {
        method: 'PUT',
        ...json({ name: `Soak ${randomBytes(3).toString('hex')}`, type: 'dwarf' }),
        auth: asUser(p.owner),
      });
      release(p);
    },
  ],
  [
    1,
    'PUT /planets/{planetId}',
    async () => {
      const p = use(pick(planets));
      const other = users.find((u) => u !== p.owner);
      await call('PUT /planets/{planetId} (not the creator)', [403], `/planets/${p.id}`, {
        method: 'PUT',
        ...json({ name: 'Nope' }),
        auth: asUser(other),
      });
      release(p);
    },
  ],
  [
    2,
    'DELETE /planets/{planetId}',
    async () => {
      const p = takeIdle(planets, MIN_PLANETS);
      if (!p) return createPlanet();
      const res = await call('DELETE /planets/{planetId}', [204], `/planets/${p.id}`, {
        method: 'DELETE',
        auth: asUser(p.owner),
      });
      if (res) made.planetsDeleted++;
      else planets.push(p);
    },
  ],
  [
    2,
    'POST /planets/{planetId}/image',
    async () => {
      // As a client that knows its own uploads: one user may have UPLOADS_PER_USER in
      // progress (a third is a 429 by design), so the upload goes to a planet whose owner has
      // a slot left, waiting a moment when every picked one is busy.
      let p = pick(planets);
      for (let tries = 0; (uploadsOf.get(p.owner) ?? 0) >= UPLOADS_PER_USER; tries++) {
        if (tries % 20 === 19) await new Promise((resume) => setTimeout(resume, 50));
        p = pick(planets);
      }
      use(p);
      uploadsOf.set(p.owner, (uploadsOf.get(p.owner) ?? 0) + 1);
      try {
        const res = await call('POST /planets/{planetId}/image', [200], `/planets/${p.id}/image`, {
          method: 'POST',
          ...form(image),
          auth: asUser(p.owner),
          retryWhenBusy: true,
        });
        if (res) p.hasImage = true;
      } finally {
        uploadsOf.set(p.owner, uploadsOf.get(p.owner) - 1);
        release(p);
      }
    },
  ],
  [
    2,
    'GET /planets/{planetId}/image',
    async () => {
      const withImage = planets.filter((x) => x.hasImage);
      if (withImage.length === 0) return call('GET /health', [200], '/health');
      const p = use(pick(withImage));
      const res = await call('GET /planets/{planetId}/image', [200], `/planets/${p.id}/image`);
      if (res)
        await call('GET /planets/{planetId}/image (If-None-Match)', [304], `/planets/${p.id}/image`, {
          headers: { 'if-none-match': res.etag },
        });
      release(p);
    },
  ],
  [
    2,
    'POST /celestial-bodies',
    async () => {
      // Only a planet's creator adds its satellites, at most SATELLITES_PER_PLANET of them.
      const p = use(pick(planets));
      const full = p.satellites >= SATELLITES_PER_PLANET;
      const res = await call('POST /celestial-bodies', full ? [409] : [201], '/celestial-bodies', {
        method: 'POST',
        ...json({ name: 'Soak moon', type: 'moon', orbit: { planet: { id: p.id }, distance: 9376 } }),
        auth: asUser(p.owner),
      });
      if (res && !full) p.satellites++;
      release(p);
    },
  ],
];
const recipes = new Set(OPERATIONS.map(([, route]) => route));
const withoutRecipe = ROUTES.filter((route) => !recipes.has(route));
const stale = [...recipes].filter((route) => !ROUTES.includes(route));
if (withoutRecipe.length > 0 || stale.length > 0) {
  for (const route of withoutRecipe) console.error(`soak: no traffic for ${route}: add an operation to OPERATIONS`);
  for (const route of stale) console.error(`soak: OPERATIONS names ${route}, which the server does not have`);
  await stopAndClean();
  process.exit(1);
}

const totalWeight = OPERATIONS.reduce((sum, [w]) => sum + w, 0);
const randomOperation = () => {
  let r = Math.random() * totalWeight;
  for (const [w, , op] of OPERATIONS) if ((r -= w) < 0) return op;
  return OPERATIONS[0][2];
};

// ---------------------------------------------------------------------------------------
// Requests and what they are measured by

const minutes = [];
const current = () => minutes[minutes.length - 1];
const newMinute = () => minutes.push({ latencies: [], errors: 0, rss: [], pool: [], active: [], reported: false });
/** Unexpected answers by route and status, with the first body seen. */
const errorKinds = new Map();
/** The routes requests went to: a call's name is its route, then what sets it apart in parentheses. */
const requested = new Set();

/** Refusals for want of a free store slot that the upload client waited out and sent again. */
let uploadsBusy = 0;
const BUSY_RETRIES = 5;

/**
 * One request; counts it, and returns { body, etag } only when its status is the expected one.
 * With `retryWhenBusy`, a 503 `unavailable` problem with Retry-After (the server sheds an
 * upload when all its store slots are taken) is waited out and sent again, up to
 * BUSY_RETRIES times, as a client that reads the answer would; each is counted in uploadsBusy.
 */
async function call(name, expected, path, { method = 'GET', body, headers = {}, apiKey, auth, retryWhenBusy } = {}) {
  requested.add(name.replace(/ \(.+\)$/, ''));
  const started = performance.now();
  const bucket = current();
  let status = 0;
  let text = '';
  let etag = null;
  for (let attempt = 0; ; attempt++) {
    let retryAfter = null;
    try {
      const res = await fetch(`${base}${path}`, {
        method,
        body,
        headers: { ...headers, ...(apiKey ? { 'x-api-key': apiKey } : {}), ...(auth ? { authorization: auth } : {}) },
      });
      status = res.status;
      etag = res.headers.get('etag');
      retryAfter = res.headers.get('retry-after');
      text = res.headers.get('content-type')?.includes('json') ? await res.text() : (await res.arrayBuffer(), '');
    } catch (err) {
      status = 0;
      text = String(err?.cause ?? err);
    }
    // Only the store-slot refusal: another 503 (a database that is down) stays an error.
    const busy = status === 503 && retryAfter !== null && text.includes('Too many uploads are being stored');
    if (!(retryWhenBusy && busy && attempt < BUSY_RETRIES)) break;
    uploadsBusy++;
    await new Promise((resume) => setTimeout(resume, Number(retryAfter) * 1000));
  }
  bucket.latencies.push(performance.now() - started);
  if (!expected.includes(status)) {
    bucket.errors++;
    const kind = `${name}: ${status} (expected ${expected.join(' or ')})`;
    errorKinds.set(kind, {
      count: (errorKinds.get(kind)?.count ?? 0) + 1,
      body: errorKinds.get(kind)?.body ?? text.slice(0, 200),
    });
    return null;
  }
  return { body: text ? JSON.parse(text) : null, etag };
}

async function sample() {
  const bucket = current();
  try {
    const rss = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${server.pid}/status`, 'utf8'));
    if (rss) bucket.rss.push(Number(rss[1]) / 1024);
  } catch {}
  try {
    const [row] = await admin(
      "SELECT count(*)::int AS total, count(*) FILTER (WHERE state = 'active')::int AS active FROM pg_stat_activity WHERE datname = $1 AND application_name LIKE $2",
      [soakDb, APP_NAME],
    );
    bucket.pool.push(row.total);
    bucket.active.push(row.active);
  } catch {}
}

const pct = (sorted, p) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] : 0;
const fmt = (n, digits = 1) => n.toFixed(digits).padStart(8);
function report(index, bucket, seconds) {
  bucket.reported = true;
  const sorted = [...bucket.latencies].sort((a, b) => a - b);
  const max = (xs) => (xs.length ? Math.max(...xs) : 0);
  const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  console.log(
    `${String(index + 1).padStart(6)} ${String(sorted.length).padStart(9)} ${fmt(sorted.length / seconds)} ${String(bucket.errors).padStart(6)}` +
      ` ${fmt(pct(sorted, 50))} ${fmt(pct(sorted, 99))} ${fmt(max(sorted))} ${fmt(bucket.rss[bucket.rss.length - 1] ?? 0)}` +
      ` ${String(max(bucket.pool)).padStart(5)} ${fmt(mean(bucket.pool))} ${String(max(bucket.active)).padStart(6)}`,
  );
}

// ---------------------------------------------------------------------------------------
// The run

newMinute();
console.log(
  `soak: ${MINUTES} min, ${CONCURRENCY} concurrent clients, bcrypt cost ${BCRYPT_COST}, database ${soakDb}, Redis prefix ${redisPrefix}`,
);
// The initial key is the region's only one: its id is the one listed.
keys[0].id = (
  await call('GET /auth/regions/me', [200], '/auth/regions/me', { apiKey: initialKey })
)?.body.apiKeys[0].id;
for (let i = 0; i < MIN_LIVE_KEYS + 2; i++) await createKey();
for (let i = 0; i < 3; i++) await signUp();
for (let i = 0; i < MIN_PLANETS + 3; i++) await createPlanet();
if (!keys[0].id || keys.length < MIN_LIVE_KEYS + 2 || users.length < 3 || planets.length < MIN_PLANETS) {
  console.error(`set-up failed:\n${[...errorKinds.keys()].join('\n')}\n${serverErrors.join('\n')}`);
  process.exitCode = 1;
}
// Every operation once, in order, so that a short run too reaches every route (the set-up
// left keys and planets to delete, and an image is uploaded before one is read).
if (process.exitCode === undefined) for (const [, , operation] of OPERATIONS) await operation();

console.log(' minute  requests    req/s errors   p50 ms   p99 ms   max ms   rss MB  pool  pool avg active');
const startedAt = performance.now();
const deadline = startedAt + MINUTES * 60_000;
let minuteStart = startedAt;
const sampler = setInterval(sample, 1000);
const ticker = setInterval(() => {
  const now = performance.now();
  report(minutes.length - 1, current(), (now - minuteStart) / 1000);
  minuteStart = now;
  if (now < deadline - 1000) newMinute();
}, 60_000);
if (process.exitCode === undefined) {
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < deadline && !serverExit) await randomOperation()();
    }),
  );
}
clearInterval(ticker);
clearInterval(sampler);
await sample();
if (!current().reported) report(minutes.length - 1, current(), (performance.now() - minuteStart) / 1000);

// ---------------------------------------------------------------------------------------
// What the tables hold against what the client made

const unrequested = ROUTES.filter((route) => !requested.has(route));
let failed =
  minutes.some((m) => m.errors > 0) ||
  serverErrors.length > 0 ||
  Boolean(serverExit) ||
  process.exitCode === 1 ||
  unrequested.length > 0;
const counts = async () => {
  const client = new pg.Client({ connectionString: dbUrl.toString(), application_name: 'soak-admin' });
  await client.connect();
  try {
    const q = async (sql) => (await client.query(sql)).rows[0].n;
    return {
      'api keys, live': await q('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NULL'),
      'api keys, revoked': await q('SELECT count(*)::int AS n FROM api_keys WHERE revoked_at IS NOT NULL'),
      users: await q('SELECT count(*)::int AS n FROM users'),
      planets: await q('SELECT count(*)::int AS n FROM planets'),
      satellites: await q('SELECT count(*)::int AS n FROM satellites'),
      'planet images': await q('SELECT count(*)::int AS n FROM planet_images'),
    };
  } finally {
    await client.end();
  }
};
const expected = {
  'api keys, live': keys.length,
  'api keys, revoked': made.keysRevoked,
  users: made.users,
  planets: made.planetsCreated - made.planetsDeleted,
  // A deleted planet's satellites go with it: the planets left say how many remain.
  satellites: planets.reduce((sum, p) => sum + p.satellites, 0),
  'planet images': planets.filter((p) => p.hasImage).length,
};
const actual = await counts();
console.log('\ntable                 expected   actual');
for (const [name, n] of Object.entries(expected)) {
  const ok = actual[name] === n;
  failed ||= !ok;
  console.log(
    `${name.padEnd(20)} ${String(n).padStart(9)} ${String(actual[name]).padStart(8)}${ok ? '' : '   MISMATCH'}`,
  );
}

const exit = await stopAndClean();
if (exit.code !== 0) {
  failed = true;
  console.log(`server exit after SIGTERM: ${JSON.stringify(exit)}`);
}
// Read once the server has gone, so that its last lines are in.
failed ||= busyUploadLines !== uploadsBusy;

const totals = minutes.reduce((t, m) => ({ requests: t.requests + m.latencies.length, errors: t.errors + m.errors }), {
  requests: 0,
  errors: 0,
});
const rss = minutes.flatMap((m) => m.rss);
console.log(
  `\n${totals.requests} requests, ${totals.errors} errors, ${serverErrors.length} server error lines; ` +
    `rss first ${rss[0]?.toFixed(1)} MB, last ${rss[rss.length - 1]?.toFixed(1)} MB, max ${Math.max(...rss).toFixed(1)} MB`,
);
console.log(
  `uploads refused for want of a store slot and sent again after Retry-After: ${uploadsBusy} ` +
    `(server lines of them: ${busyUploadLines}${busyUploadLines === uploadsBusy ? '' : ', MISMATCH'})`,
);
for (const [kind, { count, body }] of errorKinds) console.log(`error: ${count} × ${kind} ${body}`);
for (const line of serverErrors.slice(0, 10)) console.log(`server: ${line}`);
for (const route of unrequested) console.log(`no request reached ${route}`);
console.log(failed ? 'soak FAILED' : 'soak passed');
process.exit(failed ? 1 : 0);
