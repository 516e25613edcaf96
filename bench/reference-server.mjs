// The hand-written reference: bare Fastify + pg (+ ioredis, bcrypt), no Nest, no ORM, no
// Passport. It answers the benchmarked routes of the service with the same SQL and the same
// JSON, doing the work the contract requires of each request and nothing more:
//   GET /auth/regions/me        key format check, key hash lookup with its region and the
//                               region's active keys (one query), lastUsedAt once a minute
//   POST/DELETE /auth/region/api-keys  under the region row's lock, as the service does
//   GET /me                     Bearer: HS256 verify + user lookup; Basic: failed-sign-in
//                               counter peek (Redis), user lookup, bcrypt once, then a cache
//   GET /planets                a page with creators, the total, the page's satellites
// Bodies of 1 KiB and more are compressed (br or gzip) when the client accepts it, as the
// service's are, with the same plugin and settings.
// Anything else: a 404 problem document. Configured by the same variables as the service.
import { createHash, createHmac, createSecretKey, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import fastifyCompress from '@fastify/compress';
import bcrypt from 'bcrypt';
import Fastify from 'fastify';
import { Redis } from 'ioredis';
import pg from 'pg';
// The key format is part of the work (a malformed key never reaches the database): the
// service's own codec, which has no framework in it.
import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from '../dist/src/region-keys/api-key-codec.js';

const env = process.env;
const LAST_USED_RESOLUTION_MS = Number(env.API_KEY_LAST_USED_RESOLUTION_SECONDS ?? 60) * 1000;
const MAX_KEYS = Number(env.MAX_API_KEYS_PER_REGION ?? 100);
const LOGIN_FAILURE_LIMIT = Number(env.LOGIN_FAILURE_LIMIT ?? 10);
const BASIC_CACHE_TTL_MS = Number(env.BASIC_AUTH_CACHE_TTL_SECONDS ?? 300) * 1000;
const REDIS_PREFIX = `${env.REDIS_KEY_PREFIX ?? 'region-keys-api:'}rate-limit:login-failures:`;

const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE ?? 10) });
const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
// Key objects: createHmac converts a Buffer key on every call.
const jwtKey = createSecretKey(Buffer.from(env.JWT_SECRET, 'utf8'));
const dummyHash = await bcrypt.hash(randomBytes(24).toString('base64'), Number(env.BCRYPT_COST ?? 12));

const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};
const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';
const USER_CHALLENGE = 'Basic realm="api", charset="UTF-8", Bearer';

function problem(reply, request, status, slug, title, detail, headers = {}) {
  return reply
    .code(status)
    .headers(headers)
    .type('application/problem+json; charset=utf-8')
    .send({ type: `/problems/${slug}`, title, status, detail, instance: request.url.split('?')[0] });
}

const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
await app.register(fastifyCompress, { encodings: ['br', 'gzip'], threshold: 1024, globalDecompression: false });
app.addHook('onRequest', async (request, reply) => {
  const sent = request.headers['x-request-id'];
  reply.header('x-request-id', typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID());
  reply.headers(SECURITY_HEADERS);
});
app.setNotFoundHandler((request, reply) =>
  problem(reply, request, 404, 'not-found', 'Not found', `Cannot ${request.method} ${request.url.split('?')[0]}`),
);

// Region API keys.

const iso = (date) => date?.toISOString() ?? null;
const apiKeyJson = (row) => ({
  id: row.id,
  description: row.description,
  tokenPreview: row.token_preview,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  lastUsedAt: iso(row.last_used_at),
  revokesAt: iso(row.revokes_at),
  permissions: row.permissions,
  allowedCidrs: row.allowed_cidrs,
});

const CALLER_WITH_REGION = `
  SELECT c.id AS caller_id, c.last_used_at AS caller_last_used_at, c.permissions AS caller_permissions,
         r.id AS region_id, r.name AS region_name, r.created_at AS region_created_at, r.updated_at AS region_updated_at,
         k.id, k.description, k.token_preview, k.created_at, k.updated_at, k.last_used_at, k.revokes_at, k.permissions, k.allowed_cidrs
    FROM api_keys c
    JOIN regions r ON r.id = c.region_id
    JOIN api_keys k ON k.region_id = c.region_id AND k.revoked_at IS NULL AND (k.revokes_at IS NULL OR k.revokes_at > $2)
   WHERE c.token_hash = $1 AND c.revoked_at IS NULL AND (c.revokes_at IS NULL OR c.revokes_at > $2)
   ORDER BY k.created_at, k.id`;

/** The caller's key and region with its active keys (rows), or null. */
async function authenticateKey(request, reply) {
  const presented = request.headers['x-api-key'];
  if (typeof presented === 'string' && presented.length > 0 && isWellFormedApiKey(presented)) {
    const { rows } = await pool.query(CALLER_WITH_REGION, [hashApiKey(presented), new Date()]);
    if (rows.length > 0) {
      await recordUse(rows);
      return rows;
    }
  }
  problem(reply, request, 401, 'unauthenticated', 'Authentication required', 'Send a valid, active region API key in the X-API-Key header.', {
    'www-authenticate': API_KEY_CHALLENGE,
  });
  return null;
}

async function recordUse(rows) {
  const now = new Date();
  const staleBefore = new Date(now.getTime() - LAST_USED_RESOLUTION_MS);
  const { caller_id: id, caller_last_used_at: lastUsed } = rows[0];
  if (lastUsed && lastUsed >= staleBefore) return;
  const touched = await pool.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3) RETURNING last_used_at',
    [id, now, staleBefore],
  );
  const caller = rows.find((row) => row.id === id);
  if (touched.rows[0] && caller) caller.last_used_at = touched.rows[0].last_used_at;
}

app.get('/auth/regions/me', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  if (!rows) return reply;
  const [first] = rows;
  return {
    id: first.region_id,
    name: first.region_name,
    createdAt: iso(first.region_created_at),
    updatedAt: iso(first.region_updated_at),
    apiKeys: rows.map(apiKeyJson),
  };
});

/** BEGIN, lock the region row, run `work`, COMMIT (ROLLBACK on error). */
async function inRegionLock(regionId, work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT id FROM regions WHERE id = $1 FOR UPDATE', [regionId]);
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

const countActive = async (client, regionId) =>
  (await client.query('SELECT count(*)::int AS n FROM api_keys WHERE region_id = $1 AND revoked_at IS NULL', [regionId])).rows[0].n;

app.post('/auth/region/api-keys', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  if (!rows) return reply;
  const body = request.body ?? {};
  const raw = body.description;
  const description = typeof raw === 'string' ? raw.trim() : raw;
  if (typeof body !== 'object' || Object.keys(body).some((k) => k !== 'description') ||
      (description != null && (typeof description !== 'string' || description.length < 1 || description.length > 255))) {
    return problem(reply, request, 400, 'validation', 'Invalid request', 'The request has invalid or unexpected values; see errors.');
  }
  const regionId = rows[0].region_id;
  const key = generateApiKey();
  const created = await inRegionLock(regionId, async (client) => {
    if ((await countActive(client, regionId)) >= MAX_KEYS) return null;
    const { rows: [row] } = await client.query(
      `INSERT INTO api_keys (id, region_id, token_hash, token_preview, description, permissions)
       VALUES ($1, $2, $3, $4, $5, $6) RETURNING id, description, token_preview, created_at, updated_at, last_used_at, revokes_at, permissions, allowed_cidrs`,
      // As the service: a new key gets the caller's permissions (the bench's keys have no allowlist).
      [randomUUID(), regionId, hashApiKey(key), previewApiKey(key), description ?? null, rows[0].caller_permissions],
    );
    return row;
  });
  if (!created) return problem(reply, request, 409, 'api-key-limit', 'Too many API keys', `A region can hold at most ${MAX_KEYS} active API keys.`);
  reply.code(201).header('cache-control', 'no-store');
  return { ...apiKeyJson(created), key };
});

app.delete('/auth/region/api-keys/:id', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  if (!rows) return reply;
  const { id } = request.params;
  if (!UUID.test(id)) return problem(reply, request, 400, 'validation', 'Invalid request', 'id must be a UUID.');
  const regionId = rows[0].region_id;
  const outcome = await inRegionLock(regionId, async (client) => {
    const found = await client.query('SELECT id FROM api_keys WHERE id = $1 AND region_id = $2 AND revoked_at IS NULL', [id, regionId]);
    if (found.rowCount === 0) return 'not-found';
    if ((await countActive(client, regionId)) <= 1) return 'last';
    await client.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL', [id]);
    return 'revoked';
  });
  if (outcome === 'not-found') return problem(reply, request, 404, 'not-found', 'Not found', 'No active API key with this id exists in your region.');
  if (outcome === 'last') return problem(reply, request, 409, 'last-api-key', 'Cannot delete the last API key', 'A region must keep at least one active API key.');
  return reply.code(204).send();
});

// Users: GET /me with Bearer or Basic.

const BEARER = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/i;
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;
const USER_ID = /^[1-9][0-9]{0,9}$/;
const userJson = ({ id, name }) => ({ id, name });

/** The user id a valid HS256 token names, or null. */
function verifiedSubject(header) {
  const [, head, payload, signature] = BEARER.exec(header) ?? [];
  if (!signature) return null;
  try {
    if (JSON.parse(Buffer.from(head, 'base64url')).alg !== 'HS256') return null;
    const expected = createHmac('sha256', jwtKey).update(`${head}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const claims = JSON.parse(Buffer.from(payload, 'base64url'));
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now()) return null;
    if (typeof claims.sub !== 'string' || !USER_ID.test(claims.sub) || Number(claims.sub) > 2147483647) return null;
    return Number(claims.sub);
  } catch {
    return null;
  }
}

const basicCacheKey = createSecretKey(randomBytes(32));
const basicCache = new Map();
const basicInFlight = new Map();

/** bcrypt once per credentials: concurrent first requests share one comparison. */
function compareOnce(cacheKey, password, hash) {
  const key = `${cacheKey}\n${hash}`;
  let pending = basicInFlight.get(key);
  if (!pending) {
    pending = bcrypt.compare(password, hash).finally(() => basicInFlight.delete(key));
    basicInFlight.set(key, pending);
  }
  return pending;
}

async function basicUser(header, ip) {
  const encoded = BASIC.exec(header)?.[1];
  if (!encoded) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 1) return null;
  const email = decoded.slice(0, colon).trim().toLowerCase();
  const password = decoded.slice(colon + 1);
  const counter = REDIS_PREFIX + createHash('sha256').update(`${ip}\n${email}`).digest('hex');
  const [hits] = await Promise.all([redis.get(counter), redis.pttl(counter)]);
  if (Number(hits ?? 0) >= LOGIN_FAILURE_LIMIT) return null;
  const { rows: [user] } = await pool.query('SELECT id, name, email, password_hash FROM users WHERE lower(email) = lower($1)', [email]);
  const cacheKey = createHmac('sha256', basicCacheKey).update(JSON.stringify([email, password])).digest('base64');
  const cached = basicCache.get(cacheKey);
  if (user && cached && cached.expiresAt > Date.now() && cached.userId === user.id && cached.hash === user.password_hash) return user;
  if (!user) {
    await bcrypt.compare(password, dummyHash);
    return null;
  }
  if (!(await compareOnce(cacheKey, password, user.password_hash))) return null;
  basicCache.set(cacheKey, { userId: user.id, hash: user.password_hash, expiresAt: Date.now() + BASIC_CACHE_TTL_MS });
  return user;
}

app.get('/me', async (request, reply) => {
  const header = request.headers.authorization ?? '';
  let user = null;
  if (/^Basic /i.test(header)) {
    user = await basicUser(header, request.ip);
  } else {
    const id = verifiedSubject(header);
    if (id !== null) user = (await pool.query('SELECT id, name, email FROM users WHERE id = $1', [id])).rows[0];
  }
  if (!user) {
    return problem(reply, request, 401, 'unauthenticated', 'Authentication required', 'Send your email and password (Basic) or a token (Bearer).', {
      'www-authenticate': USER_CHALLENGE,
    });
  }
  return userJson(user);
});

// Planets.

const PAGE = `
  SELECT p.id, p.name, p.description, p.type, p.habitability_index, p.mass, p.radius, p.gravity,
         p.temperature_min, p.temperature_max, p.temperature_average, p.atmosphere, p.discovered_at,
         p.tags, p.updated_at, u.id AS creator_id, u.name AS creator_name, i.planet_id IS NOT NULL AS has_image
    FROM planets p
    JOIN users u ON u.id = p.creator_id
    LEFT JOIN planet_images i ON i.planet_id = p.id
   ORDER BY p.id LIMIT $1 OFFSET $2`;
const SATELLITES = `
  SELECT id, planet_id, name, description, diameter, type, orbital_period, distance
    FROM satellites WHERE planet_id = ANY($1) ORDER BY planet_id, id`;
const INTEGER = /^-?\d{1,16}$/;

/** Copies the non-null values only: the Galaxy's optional fields are left out, never null. */
function present(target, entries) {
  for (const [key, value] of entries) if (value !== null && value !== undefined) target[key] = value;
  return target;
}

function planetJson(p, satellites) {
  const temperature = present({}, [['min', p.temperature_min], ['max', p.temperature_max], ['average', p.temperature_average]]);
  const physical = present({}, [['mass', p.mass], ['radius', p.radius], ['gravity', p.gravity]]);
  if (Object.keys(temperature).length > 0) physical.temperature = temperature;
  const planet = present({ id: p.id, name: p.name, description: p.description }, [
    ['type', p.type],
    ['habitabilityIndex', p.habitability_index],
    ['physicalProperties', Object.keys(physical).length > 0 ? physical : null],
  ]);
  planet.atmosphere = p.atmosphere.map(({ compound, percentage }) => ({ compound, percentage }));
  present(planet, [['discoveredAt', iso(p.discovered_at)]]);
  planet.image = p.has_image ? `/planets/${p.id}/image` : null;
  planet.satellites = satellites.map((s) => {
    const orbit = present({ planet: { id: p.id, name: p.name } }, [['orbitalPeriod', s.orbital_period], ['distance', s.distance]]);
    return { ...present({ id: s.id, name: s.name, description: s.description }, [['diameter', s.diameter]]), type: s.type, orbit };
  });
  planet.creator = { id: p.creator_id, name: p.creator_name };
  planet.tags = p.tags;
  planet.lastUpdated = iso(p.updated_at);
  return planet;
}

app.get('/planets', async (request, reply) => {
  const query = request.query;
  const number = (value, fallback) => (value === undefined ? fallback : INTEGER.test(value) ? Number(value) : NaN);
  const limit = number(query.limit, 10);
  const offset = number(query.offset, 0);
  if (!(limit >= 1 && limit <= 100) || !(offset >= 0 && offset <= 2147483647)) {
    return problem(reply, request, 400, 'validation', 'Invalid request', 'limit is 1..100, offset 0 or more.');
  }
  const [page, count] = await Promise.all([pool.query(PAGE, [limit, offset]), pool.query('SELECT count(*)::int AS n FROM planets')]);
  const total = count.rows[0].n;
  const satellites = page.rows.length === 0 ? [] : (await pool.query(SATELLITES, [page.rows.map((p) => p.id)])).rows;
  const byPlanet = Map.groupBy(satellites, (s) => s.planet_id);
  reply.headers({
    'x-pagination-total': String(total),
    'x-pagination-page': String(Math.floor(offset / limit) + 1),
    'x-pagination-per-page': String(limit),
  });
  return {
    data: page.rows.map((p) => planetJson(p, byPlanet.get(p.id) ?? [])),
    meta: { limit, offset, total, next: offset + limit < total ? `/planets?limit=${limit}&offset=${offset + limit}` : null },
  };
});

app.get('/health', async () => {
  await pool.query('SELECT 1');
  return { status: 'ok', database: 'up' };
});

await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', async () => {
  await app.close();
  await pool.end();
  redis.disconnect();
  process.exit(0);
});
