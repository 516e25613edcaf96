// The hand-written reference: bare Fastify + pg (+ ioredis, bcrypt), no Nest, no ORM, no
// Passport. It answers the benchmarked routes of the service with the same SQL and the same
// JSON (bench/lib/plain-sql.mjs, shared with bench/ceiling-server.mjs), doing the work the
// contract requires of each request and nothing more:
//   GET /auth/regions/me        key format check, key hash lookup with its region and the
//                               region's active keys (one query), lastUsedAt once a minute,
//                               the key's rate limit (one Redis script call)
//   POST/DELETE /auth/region/api-keys  under the region row's lock, with the audit event,
//                               as the service does
//   GET /me                     Bearer: HS256 verify + user lookup; Basic: failed-sign-in
//                               counter peek (Redis), user lookup, bcrypt once, then a cache
//   GET /planets                a page with creators, the total, the page's satellites
// Every response carries the security headers and X-Request-ID. Bodies of 1 KiB and more
// are compressed (br or gzip) when the client accepts it, as the service's are, with the
// same plugin and settings. Anything else: a 404 problem document. Configured by the same
// variables as the service.
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';
import fastifyCompress from '@fastify/compress';
import Fastify from 'fastify';
import { absoluteUrl } from '../dist/src/common/http/location.js';
import {
  API_KEY_CHALLENGE,
  createKey,
  findCaller,
  parseCreateBody,
  plainBackends,
  problem,
  planetsPage,
  regionJson,
  requestIdOf,
  revokeKey,
  SECURITY_HEADERS,
  USER_CHALLENGE,
  userForClaims,
  userJson,
  UUID,
} from './lib/plain-sql.mjs';

const env = process.env;
const {
  pool,
  redis,
  signInBasic,
  takeKeyHit,
  lastUsedResolutionMs: LAST_USED_RESOLUTION_MS,
  maxKeys: MAX_KEYS,
} = await plainBackends(env);
// A key object: createHmac converts a Buffer key on every call.
const jwtKey = createSecretKey(Buffer.from(env.JWT_SECRET, 'utf8'));

const app = Fastify({ logger: false, bodyLimit: 64 * 1024, genReqId: requestIdOf });
await app.register(fastifyCompress, { encodings: ['br', 'gzip'], threshold: 1024, globalDecompression: false });
app.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id);
  reply.headers(SECURITY_HEADERS);
});
app.setNotFoundHandler((request, reply) =>
  problem(reply, request, 404, 'not-found', 'Not found', `Cannot ${request.method} ${request.url.split('?')[0]}`),
);

// Region API keys.

/** The caller's key and region with its active keys (rows), or null once the 401 is sent. */
async function authenticateKey(request, reply) {
  const rows = await findCaller(pool, request.headers['x-api-key'], LAST_USED_RESOLUTION_MS);
  if (rows) {
    const hit = await takeKeyHit(rows);
    reply.headers(hit.headers);
    if (!hit.refused) return rows;
    problem(reply, request, 429, 'too-many-requests', 'Too many requests', 'Too many requests with this API key.', {
      'retry-after': String(hit.retryAfter),
    });
    return null;
  }
  problem(
    reply,
    request,
    401,
    'unauthenticated',
    'Authentication required',
    'Send a valid, active region API key in the X-API-Key header.',
    {
      'www-authenticate': API_KEY_CHALLENGE,
    },
  );
  return null;
}

const originOf = (request) => ({ clientAddress: request.ip, requestId: request.id });

app.get('/auth/regions/me', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  return rows ? regionJson(rows) : reply;
});

app.post('/auth/region/api-keys', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  if (!rows) return reply;
  const { error, description } = parseCreateBody(request.body);
  if (error)
    return problem(
      reply,
      request,
      400,
      'validation',
      'Invalid request',
      'The request has invalid or unexpected values; see errors.',
    );
  const created = await createKey(pool, rows, description, originOf(request), MAX_KEYS);
  if (!created)
    return problem(
      reply,
      request,
      409,
      'api-key-limit',
      'Too many API keys',
      `A region can hold at most ${MAX_KEYS} active API keys.`,
    );
  reply
    .code(201)
    .header('cache-control', 'no-store')
    .header('location', absoluteUrl(request, undefined, `/auth/region/api-keys/${created.id}`));
  return created;
});

app.delete('/auth/region/api-keys/:id', async (request, reply) => {
  const rows = await authenticateKey(request, reply);
  if (!rows) return reply;
  const { id } = request.params;
  if (!UUID.test(id)) return problem(reply, request, 400, 'validation', 'Invalid request', 'id must be a UUID.');
  const outcome = await revokeKey(pool, rows, id, originOf(request));
  if (outcome === 'not-found')
    return problem(
      reply,
      request,
      404,
      'not-found',
      'Not found',
      'No active API key with this id exists in your region.',
    );
  if (outcome === 'last')
    return problem(
      reply,
      request,
      409,
      'last-api-key',
      'Cannot delete the last API key',
      'A region must keep at least one active API key.',
    );
  return reply.code(204).send();
});

// Users: GET /me with Bearer or Basic.

const BEARER = /^Bearer ([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)\.([A-Za-z0-9_-]+)$/i;
const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i;

/** The claims of a valid HS256 token, or null. */
function verifiedClaims(header) {
  const [, head, payload, signature] = BEARER.exec(header) ?? [];
  if (!signature) return null;
  try {
    if (JSON.parse(Buffer.from(head, 'base64url')).alg !== 'HS256') return null;
    const expected = createHmac('sha256', jwtKey).update(`${head}.${payload}`).digest();
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
    const claims = JSON.parse(Buffer.from(payload, 'base64url'));
    if (typeof claims.exp !== 'number' || claims.exp * 1000 <= Date.now()) return null;
    return claims;
  } catch {
    return null;
  }
}

function basicCredentials(header) {
  const encoded = BASIC.exec(header)?.[1];
  if (!encoded) return null;
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 1 ? null : { email: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

app.get('/me', async (request, reply) => {
  const header = request.headers.authorization ?? '';
  let user = null;
  if (/^Basic /i.test(header)) {
    const credentials = basicCredentials(header);
    if (credentials) user = await signInBasic(credentials.email, credentials.password, request.ip);
  } else {
    const claims = verifiedClaims(header);
    if (claims) user = await userForClaims(pool, claims);
  }
  if (!user) {
    return problem(
      reply,
      request,
      401,
      'unauthenticated',
      'Authentication required',
      'Send your email and password (Basic) or a token from POST /auth/token (Bearer) in the Authorization header.',
      { 'www-authenticate': USER_CHALLENGE },
    );
  }
  return userJson(user);
});

// Planets.

app.get('/planets', async (request, reply) => {
  const page = await planetsPage(pool, request.query);
  if (!page) return problem(reply, request, 400, 'validation', 'Invalid request', 'limit is 1..100, offset 0 or more.');
  reply.headers(page.headers);
  return page.body;
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
