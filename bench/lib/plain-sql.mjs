// The database work of the benchmark's hand-written servers (bench/reference-server.mjs and
// bench/ceiling-server.mjs): the service's SQL, run with a `pg` Pool, and the service's JSON
// made from the rows by hand. Both servers share it, so that what separates them from each
// other, and from the service, is the HTTP stack around the same queries.
import { createHash, createHmac, createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import bcrypt from 'bcrypt';
import { Redis } from 'ioredis';
import pg from 'pg';
import {
  generateApiKey,
  hashApiKey,
  isWellFormedApiKey,
  previewApiKey,
} from '../../dist/src/region-keys/api-key-codec.js';

export const SECURITY_HEADERS = {
  'x-content-type-options': 'nosniff',
  'content-security-policy': "frame-ancestors 'none'",
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};
const SANE_REQUEST_ID = /^[A-Za-z0-9._:\-]{1,128}$/;

/** Fastify's genReqId: the client's X-Request-ID when short and plain, else a new UUID. */
export function requestIdOf(req) {
  const sent = req.headers['x-request-id'];
  return typeof sent === 'string' && SANE_REQUEST_ID.test(sent) ? sent : randomUUID();
}

/** A problem document, as the service answers a refusal. */
export function problem(reply, request, status, slug, title, detail, headers = {}) {
  return reply
    .code(status)
    .headers(headers)
    .type('application/problem+json; charset=utf-8')
    .send({ type: `/problems/${slug}`, title, status, detail, instance: request.url.split('?')[0] });
}

/**
 * What the reference and the ceiling open from the service's settings: the pool, Redis,
 * Basic sign-in, and the key settings they apply.
 */
export async function plainBackends(env) {
  const pool = new pg.Pool({ connectionString: env.DATABASE_URL, max: Number(env.DATABASE_POOL_SIZE ?? 10) });
  const redis = new Redis(env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: 1 });
  return {
    pool,
    redis,
    signInBasic: await basicSignIn({ pool, redis, env }),
    takeKeyHit: keyRateLimiter(redis, env),
    lastUsedResolutionMs: Number(env.API_KEY_LAST_USED_RESOLUTION_SECONDS ?? 60) * 1000,
    maxKeys: Number(env.MAX_API_KEYS_PER_REGION ?? 100),
  };
}

export const API_KEY_CHALLENGE = 'ApiKey header="X-API-Key"';
export const USER_CHALLENGE = 'Basic realm="api", charset="UTF-8", Bearer';
export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/i;
const MANAGE_KEYS = 'keys:write';

export const iso = (date) => date?.toISOString() ?? null;

// Region API keys.

export const apiKeyJson = (row) => ({
  id: row.id,
  description: row.description,
  tokenPreview: row.token_preview,
  createdAt: iso(row.created_at),
  updatedAt: iso(row.updated_at),
  lastUsedAt: iso(row.last_used_at),
  revokesAt: iso(row.revokes_at),
  expiresAt: iso(row.expires_at),
  permissions: row.permissions,
  allowedCidrs: row.allowed_cidrs,
  rateLimit:
    row.rate_limit_requests === null
      ? null
      : { requests: row.rate_limit_requests, perSeconds: row.rate_limit_per_seconds },
  leakReportedAt: iso(row.leak_reported_at),
});

const API_KEY_COLUMNS =
  'id, description, token_preview, created_at, updated_at, last_used_at, revokes_at, expires_at, permissions, ' +
  'allowed_cidrs, rate_limit_requests, rate_limit_per_seconds, leak_reported_at';
const activeAt = (alias) =>
  `${alias}.revoked_at IS NULL AND (${alias}.revokes_at IS NULL OR ${alias}.revokes_at > $2)
   AND (${alias}.expires_at IS NULL OR ${alias}.expires_at > $2)`;

const CALLER_WITH_REGION = `
  SELECT c.id AS caller_id, c.token_preview AS caller_token_preview, c.last_used_at AS caller_last_used_at,
         c.permissions AS caller_permissions, c.rate_limit_requests AS caller_rate_limit_requests,
         c.rate_limit_per_seconds AS caller_rate_limit_per_seconds,
         r.id AS region_id, r.name AS region_name, r.created_at AS region_created_at, r.updated_at AS region_updated_at,
         ${API_KEY_COLUMNS.split(', ')
           .map((column) => `k.${column}`)
           .join(', ')}
    FROM api_keys c
    JOIN regions r ON r.id = c.region_id
    JOIN api_keys k ON k.region_id = c.region_id AND ${activeAt('k')}
   WHERE c.token_hash = $1 AND ${activeAt('c')}
   ORDER BY k.created_at, k.id`;

// INCR and, on a window's first request, its expiry: one fixed window per key, in one call.
const KEY_WINDOW_HIT = `
  local hits = redis.call('INCR', KEYS[1])
  if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
  return { hits, redis.call('PTTL', KEYS[1]) }`;

/**
 * The caller's rate limit (its own, or REGION_KEY_RATE_LIMIT): counts the request in Redis, one
 * script call, as the service does, and answers the RateLimit headers and whether it is refused.
 */
export function keyRateLimiter(redis, env) {
  const [requests, perSeconds] = (env.REGION_KEY_RATE_LIMIT ?? '600/60').split('/').map(Number);
  const prefix = `${env.REDIS_KEY_PREFIX ?? 'region-keys-api:'}plain-rate-limit:api-key:`;
  return async ([caller]) => {
    const limit = caller.caller_rate_limit_requests ?? requests;
    const window = caller.caller_rate_limit_per_seconds ?? perSeconds;
    const [hits, pttl] = await redis.eval(
      KEY_WINDOW_HIT,
      1,
      `${prefix}${limit}:${window}:${caller.caller_id}`,
      window * 1000,
    );
    const [left, reset] = [Math.max(0, limit - hits), Math.max(0, Math.ceil(pttl / 1000))];
    const headers = {
      'RateLimit-Policy': `"api-key";q=${limit};w=${window}`,
      RateLimit: `"api-key";r=${left};t=${reset}`,
      'X-RateLimit-Limit': String(limit),
      'X-RateLimit-Remaining': String(left),
      'X-RateLimit-Reset': String(reset),
    };
    return { headers, refused: hits > limit, retryAfter: reset };
  };
}

/**
 * The presented key's region with the region's active keys (rows; the caller's columns on
 * each), or null for a missing, malformed, unknown or revoked key. lastUsedAt moves at most
 * once per resolution period.
 */
export async function findCaller(pool, presented, lastUsedResolutionMs) {
  if (typeof presented !== 'string' || presented.length === 0 || !isWellFormedApiKey(presented)) return null;
  const now = new Date();
  const { rows } = await pool.query(CALLER_WITH_REGION, [hashApiKey(presented), now]);
  if (rows.length === 0) return null;
  await recordUse(pool, rows, now, lastUsedResolutionMs);
  return rows;
}

async function recordUse(pool, rows, now, resolutionMs) {
  const staleBefore = new Date(now.getTime() - resolutionMs);
  const { caller_id: id, caller_last_used_at: lastUsed } = rows[0];
  if (lastUsed && lastUsed >= staleBefore) return;
  const touched = await pool.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3) RETURNING last_used_at',
    [id, now, staleBefore],
  );
  const caller = rows.find((row) => row.id === id);
  if (touched.rows[0] && caller) caller.last_used_at = touched.rows[0].last_used_at;
}

export function regionJson(rows) {
  const [first] = rows;
  return {
    id: first.region_id,
    name: first.region_name,
    createdAt: iso(first.region_created_at),
    updatedAt: iso(first.region_updated_at),
    apiKeys: rows.map(apiKeyJson),
  };
}

/** BEGIN, lock the region row, run `work` with the time read under the lock, COMMIT (ROLLBACK on error). */
async function inRegionLock(pool, regionId, work) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT id FROM regions WHERE id = $1 FOR UPDATE', [regionId]);
    const result = await work(client, new Date());
    await client.query('COMMIT');
    return result;
  } catch (err) {
    await client.query('ROLLBACK');
    throw err;
  } finally {
    client.release();
  }
}

/**
 * The audit event of a change, in its transaction: the caller's key as the actor, the
 * client address and the request id, as the service records them.
 */
function recordEvent(client, regionId, type, occurredAt, caller, origin, key, grant) {
  return client.query(
    `INSERT INTO region_events (id, region_id, type, occurred_at, actor_type, actor_api_key_id, actor_token_preview,
       api_key_id, api_key_token_preview, api_key_revokes_at, api_key_permissions, api_key_allowed_cidrs, client_address, request_id)
     VALUES ($1, $2, $3, $4, 'api_key', $5, $6, $7, $8, NULL, $9, $10, $11, $12)`,
    [
      randomUUID(),
      regionId,
      type,
      occurredAt,
      caller.caller_id,
      caller.caller_token_preview,
      key.id,
      key.token_preview,
      grant ? key.permissions : null,
      grant ? key.allowed_cidrs : null,
      origin.clientAddress,
      origin.requestId,
    ],
  );
}

/**
 * Creates a key with the caller's permissions, under the region row's lock, with its
 * `api_key.created` event. Resolves to the new key's JSON with its secret, or null when the
 * region holds `maxKeys` active keys already.
 */
export async function createKey(pool, callerRows, description, origin, maxKeys) {
  const [caller] = callerRows;
  const regionId = caller.region_id;
  const key = generateApiKey();
  const created = await inRegionLock(pool, regionId, async (client, now) => {
    const active = await client.query(
      'SELECT count(*)::int AS n FROM api_keys WHERE region_id = $1 AND revoked_at IS NULL AND (revokes_at IS NULL OR revokes_at > $2)',
      [regionId, now],
    );
    if (active.rows[0].n >= maxKeys) return null;
    const {
      rows: [row],
    } = await client.query(
      `INSERT INTO api_keys (id, region_id, token_hash, token_preview, description, permissions, allowed_cidrs)
       VALUES ($1, $2, $3, $4, $5, $6, NULL) RETURNING ${API_KEY_COLUMNS}`,
      // The bench's keys hold every permission, in the canonical order, and no allowlist.
      [randomUUID(), regionId, hashApiKey(key), previewApiKey(key), description ?? null, caller.caller_permissions],
    );
    await recordEvent(client, regionId, 'api_key.created', now, caller, origin, row, true);
    return row;
  });
  return created && { ...apiKeyJson(created), key };
}

/**
 * Revokes an active key of the caller's region, under the region row's lock, with its
 * `api_key.revoked` event, unless it is the region's last key that keeps working and may
 * manage keys. Resolves to 'revoked', 'not-found' or 'last'.
 */
export function revokeKey(pool, callerRows, id, origin) {
  const [caller] = callerRows;
  const regionId = caller.region_id;
  return inRegionLock(pool, regionId, async (client, now) => {
    const {
      rows: [key],
    } = await client.query(
      `SELECT ${API_KEY_COLUMNS} FROM api_keys WHERE id = $1 AND region_id = $2 AND revoked_at IS NULL AND (revokes_at IS NULL OR revokes_at > $3)`,
      [id, regionId, now],
    );
    if (!key) return 'not-found';
    if (key.revokes_at === null && key.permissions.includes(MANAGE_KEYS)) {
      const managers = await client.query(
        'SELECT count(*)::int AS n FROM api_keys WHERE region_id = $1 AND revoked_at IS NULL AND revokes_at IS NULL AND $2 = ANY(permissions)',
        [regionId, MANAGE_KEYS],
      );
      if (managers.rows[0].n <= 1) return 'last';
    }
    await client.query('UPDATE api_keys SET revoked_at = $2, updated_at = $2 WHERE id = $1 AND revoked_at IS NULL', [
      id,
      now,
    ]);
    await recordEvent(client, regionId, 'api_key.revoked', now, caller, origin, key, false);
    return 'revoked';
  });
}

/** The body check of POST /auth/region/api-keys: the description, trimmed (undefined when absent), or an error. */
export function parseCreateBody(body) {
  const value = body ?? {};
  const raw = value.description;
  const description = typeof raw === 'string' ? raw.trim() : raw;
  if (typeof value !== 'object' || Object.keys(value).some((k) => k !== 'description')) return { error: true };
  if (description != null && (typeof description !== 'string' || description.length < 1 || description.length > 255))
    return { error: true };
  return { description };
}

// Users.

const USER_ID = /^[1-9][0-9]{0,9}$/;
export const userJson = ({ id, name }) => ({ id, name });

/** The user a verified token's claims name, or null. */
export async function userForClaims(pool, claims) {
  if (typeof claims.exp !== 'number' || typeof claims.sub !== 'string' || !USER_ID.test(claims.sub)) return null;
  const id = Number(claims.sub);
  if (id > 2147483647) return null;
  return (await pool.query('SELECT id, name, email FROM users WHERE id = $1', [id])).rows[0] ?? null;
}

/**
 * Basic sign-in as the service makes it: the failed-sign-in counter peeked (Redis), the
 * user looked up, bcrypt once per credentials (concurrent first requests share one
 * comparison), then a cache keyed by an HMAC of the credentials. Resolves to the user or null.
 */
export async function basicSignIn({ pool, redis, env }) {
  const failureLimit = Number(env.LOGIN_FAILURE_LIMIT ?? 10);
  const cacheTtlMs = Number(env.BASIC_AUTH_CACHE_TTL_SECONDS ?? 300) * 1000;
  const counterPrefix = `${env.REDIS_KEY_PREFIX ?? 'region-keys-api:'}rate-limit:login-failures:`;
  // Key objects: createHmac converts a Buffer key on every call.
  const cacheHmacKey = createSecretKey(randomBytes(32));
  const dummyHash = await bcrypt.hash(randomBytes(24).toString('base64'), Number(env.BCRYPT_COST ?? 12));
  const cache = new Map();
  const inFlight = new Map();
  const compareOnce = (cacheKey, password, hash) => {
    const key = `${cacheKey}\n${hash}`;
    let pending = inFlight.get(key);
    if (!pending) {
      pending = bcrypt.compare(password, hash).finally(() => inFlight.delete(key));
      inFlight.set(key, pending);
    }
    return pending;
  };
  return async (rawEmail, password, ip) => {
    const email = rawEmail.trim().toLowerCase();
    const counter = counterPrefix + createHash('sha256').update(`${ip}\n${email}`).digest('hex');
    const [hits] = await Promise.all([redis.get(counter), redis.pttl(counter)]);
    if (Number(hits ?? 0) >= failureLimit) return null;
    const {
      rows: [user],
    } = await pool.query('SELECT id, name, email, password_hash FROM users WHERE lower(email) = lower($1)', [email]);
    const cacheKey = createHmac('sha256', cacheHmacKey)
      .update(JSON.stringify([email, password]))
      .digest('base64');
    const cached = cache.get(cacheKey);
    if (
      user &&
      cached &&
      cached.expiresAt > Date.now() &&
      cached.userId === user.id &&
      cached.hash === user.password_hash
    )
      return user;
    if (!user) {
      await bcrypt.compare(password, dummyHash);
      return null;
    }
    if (!(await compareOnce(cacheKey, password, user.password_hash))) return null;
    cache.set(cacheKey, { userId: user.id, hash: user.password_hash, expiresAt: Date.now() + cacheTtlMs });
    return user;
  };
}

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
  const temperature = present({}, [
    ['min', p.temperature_min],
    ['max', p.temperature_max],
    ['average', p.temperature_average],
  ]);
  const physical = present({}, [
    ['mass', p.mass],
    ['radius', p.radius],
    ['gravity', p.gravity],
  ]);
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
    const orbit = present({ planet: { id: p.id, name: p.name } }, [
      ['orbitalPeriod', s.orbital_period],
      ['distance', s.distance],
    ]);
    return {
      ...present({ id: s.id, name: s.name, description: s.description }, [['diameter', s.diameter]]),
      type: s.type,
      orbit,
    };
  });
  planet.creator = { id: p.creator_id, name: p.creator_name };
  planet.tags = p.tags;
  planet.lastUpdated = iso(p.updated_at);
  return planet;
}

/**
 * A page of planets for the query string's limit and offset: { body, headers }, or null
 * when they are out of range. Page and total in parallel, then the page's satellites.
 */
export async function planetsPage(pool, query) {
  const number = (value, fallback) => (value === undefined ? fallback : INTEGER.test(value) ? Number(value) : NaN);
  const limit = number(query.limit, 10);
  const offset = number(query.offset, 0);
  if (!(limit >= 1 && limit <= 100) || !(offset >= 0 && offset <= 2147483647)) return null;
  const [page, count] = await Promise.all([
    pool.query(PAGE, [limit, offset]),
    pool.query('SELECT count(*)::int AS n FROM planets'),
  ]);
  const total = count.rows[0].n;
  const satellites = page.rows.length === 0 ? [] : (await pool.query(SATELLITES, [page.rows.map((p) => p.id)])).rows;
  const byPlanet = Map.groupBy(satellites, (s) => s.planet_id);
  return {
    headers: {
      'x-pagination-total': String(total),
      'x-pagination-page': String(Math.floor(offset / limit) + 1),
      'x-pagination-per-page': String(limit),
    },
    body: {
      data: page.rows.map((p) => planetJson(p, byPlanet.get(p.id) ?? [])),
      meta: {
        limit,
        offset,
        total,
        next: offset + limit < total ? `/planets?limit=${limit}&offset=${offset + limit}` : null,
      },
    },
  };
}
