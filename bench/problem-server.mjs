// The floor for problem answers: bare Fastify, no Nest, no database. It answers an unknown
// path with the 404 problem and GET /auth/regions/me with the 401 problem (it holds no keys:
// it checks the key's format, as the service does before any query, and refuses every key),
// with the same problem documents, the same security headers and X-Request-ID as the
// service, and one log line per request through the service's own pino logger and line
// (LOG_LEVEL as the service reads it; stdout, as the service writes). Scenarios 7a and 7b
// compare the service with it. GET /health answers for start-up only.
import Fastify from 'fastify';
import { isWellFormedApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { createRootLogger, OneLinePerRequest } from '../dist/src/common/logging/logger.js';
import { API_KEY_CHALLENGE, problem, requestIdOf, SECURITY_HEADERS } from './lib/plain-sql.mjs';

const env = process.env;

const logger = createRootLogger({ level: env.LOG_LEVEL ?? 'info' });
const app = Fastify({
  loggerInstance: logger,
  logController: new OneLinePerRequest(logger),
  genReqId: requestIdOf,
});
app.addHook('onRequest', async (request, reply) => {
  reply.header('x-request-id', request.id);
  reply.headers(SECURITY_HEADERS);
});
app.setNotFoundHandler((request, reply) =>
  problem(reply, request, 404, 'not-found', 'Not found', `Cannot ${request.method} ${request.url.split('?')[0]}`),
);

// No database, so no key is known: a well-formed key is refused as a malformed one is, after
// the format check the service makes before any query.
const KNOWN_KEYS = new Set();

app.get('/auth/regions/me', async (request, reply) => {
  const presented = request.headers['x-api-key'];
  const challenge = { 'www-authenticate': API_KEY_CHALLENGE };
  if (typeof presented !== 'string' || presented.length === 0) {
    return problem(
      reply,
      request,
      401,
      'unauthenticated',
      'Authentication required',
      'Send your region API key in the X-API-Key header.',
      challenge,
    );
  }
  if (!isWellFormedApiKey(presented) || !KNOWN_KEYS.has(presented)) {
    return problem(
      reply,
      request,
      401,
      'unauthenticated',
      'Authentication required',
      'Send a valid, active region API key in the X-API-Key header.',
      challenge,
    );
  }
  return reply.code(500).send();
});

app.get('/health', async () => ({ status: 'ok' }));

await app.listen({ port: Number(env.PORT), host: '127.0.0.1' });
process.once('SIGTERM', () => app.close().then(() => process.exit(0)));
