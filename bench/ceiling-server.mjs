// The ceiling: the least a service on the required stack can do per request. Bare NestJS on
// Fastify (@nestjs/core, @nestjs/platform-fastify), authentication by @nestjs/passport
// strategies and guards, `pg` with raw SQL (no TypeORM): the same queries and JSON as the
// reference (bench/lib/plain-sql.mjs), so that the service compared with this server shows
// what the service adds on top of its stack, and the reference compared with it what the
// stack itself costs. Per route only what the route needs:
//   GET /auth/regions/me        guard with an API-key strategy (passport-custom): the key's
//                               format, the key lookup with the region and its keys, the
//                               key's rate limit (one Redis script call) and its headers
//   POST/DELETE /auth/region/api-keys  the same guard; the change under the region row's
//                               lock with its audit event; Location and Cache-Control
//   GET /me                     guard with passport-http's Basic strategy (failed-sign-in
//                               counter peek, user lookup, bcrypt once, then a cache) and
//                               passport-jwt's Bearer strategy (HS256, then the user lookup)
//   GET /planets                a page, compressed as the service compresses (its own
//                               compression hooks and options)
// One global exception filter makes the problem documents (404 for unknown paths, 401 for
// refused credentials); one onRequest hook sets the security headers and X-Request-ID; the
// service's own pino logger and one-line-per-request log controller log each request
// (LOG_LEVEL, stdout). Decorators are applied by hand: this file is plain JavaScript.
import 'reflect-metadata';
import {
  Catch,
  Controller,
  Delete,
  Get,
  Header,
  HttpCode,
  HttpException,
  Module,
  Post,
  Req,
  Res,
  UseGuards,
} from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AuthGuard, PassportStrategy } from '@nestjs/passport';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Strategy as CustomStrategy } from 'passport-custom';
import { BasicStrategy as HttpBasicStrategy } from 'passport-http';
import { Strategy as JwtStrategyBase } from 'passport-jwt';
import { createSecretKey } from 'node:crypto';
import fastifyCompress from '@fastify/compress';
import {
  COMPRESSION_OPTIONS,
  keepSecretsUncompressed,
  settleAcceptEncoding,
  tagCodedRepresentations,
} from '../dist/src/common/http/compression.js';
import { absoluteUrl } from '../dist/src/common/http/location.js';
import { createRootLogger, OneLinePerRequest } from '../dist/src/common/logging/logger.js';
import {
  API_KEY_CHALLENGE,
  createKey,
  findCaller,
  parseCreateBody,
  plainBackends,
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

/** A refusal the filter answers with a problem document. */
class Problem extends Error {
  constructor(status, slug, title, detail, headers = {}) {
    super(detail);
    Object.assign(this, { status, slug, title, headers });
  }
}
const keyRefused = () =>
  new Problem(
    401,
    'unauthenticated',
    'Authentication required',
    'Send a valid, active region API key in the X-API-Key header.',
    { 'www-authenticate': API_KEY_CHALLENGE },
  );
const userRefused = () =>
  new Problem(
    401,
    'unauthenticated',
    'Authentication required',
    'Send your email and password (Basic) or a token from POST /auth/token (Bearer) in the Authorization header.',
    {
      'www-authenticate': USER_CHALLENGE,
    },
  );
const invalid = (detail) => new Problem(400, 'validation', 'Invalid request', detail);

class ProblemFilter {
  catch(exception, host) {
    const http = host.switchToHttp();
    const request = http.getRequest();
    const reply = http.getResponse();
    let problem = exception;
    if (!(exception instanceof Problem)) {
      // Nest's answer to an unknown path is a NotFoundException ("Cannot GET /path").
      const status = exception instanceof HttpException ? exception.getStatus() : 500;
      problem =
        status === 404
          ? new Problem(404, 'not-found', 'Not found', exception.message)
          : new Problem(
              500,
              'internal',
              'Internal server error',
              'The server failed to handle the request. It has been logged.',
            );
      if (status === 500) request.log.error({ err: exception }, 'request failed');
    }
    const { status, slug, title, message: detail, headers } = problem;
    reply
      .status(status)
      .headers(headers)
      .type('application/problem+json; charset=utf-8')
      .send({ type: `/problems/${slug}`, title, status, detail, instance: request.url.split('?')[0] });
  }
}
Reflect.decorate([Catch()], ProblemFilter);

// Strategies: Passport calls validate(); what it resolves to becomes request.user.

// The caller is { rows }: the mixin would spread an array over done()'s arguments.
class ApiKeyStrategy extends PassportStrategy(CustomStrategy, 'region-api-key') {
  async validate(request) {
    const rows = await findCaller(pool, request.headers['x-api-key'], LAST_USED_RESOLUTION_MS);
    return rows && { rows, hit: await takeKeyHit(rows) };
  }
}

class BasicStrategy extends PassportStrategy(HttpBasicStrategy, 'basic') {
  constructor() {
    super({ passReqToCallback: true, realm: 'api' });
  }
  validate(request, email, password) {
    return signInBasic(email, password, request.ip);
  }
}

const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i;
class JwtStrategy extends PassportStrategy(JwtStrategyBase, 'jwt') {
  constructor() {
    super({
      jwtFromRequest: (request) =>
        typeof request.headers.authorization === 'string'
          ? (BEARER.exec(request.headers.authorization)?.[1] ?? null)
          : null,
      // A key object: given a string, jsonwebtoken tries it as a public key first on every request.
      secretOrKey: createSecretKey(Buffer.from(env.JWT_SECRET, 'utf8')),
      algorithms: ['HS256'],
      ignoreExpiration: false,
    });
  }
  validate(claims) {
    return userForClaims(pool, claims);
  }
}

class ApiKeyGuard extends AuthGuard('region-api-key') {
  handleRequest(err, user, _info, context) {
    if (err) throw err;
    if (!user) throw keyRefused();
    context.switchToHttp().getResponse().headers(user.hit.headers);
    if (user.hit.refused)
      throw new Problem(429, 'too-many-requests', 'Too many requests', 'Too many requests with this API key.', {
        'retry-after': String(user.hit.retryAfter),
      });
    return user;
  }
}

// Basic first, then Bearer: each steps aside when the header is not its scheme.
class UserGuard extends AuthGuard(['basic', 'jwt']) {
  handleRequest(err, user) {
    if (err) throw err;
    if (!user) throw userRefused();
    return user;
  }
}

// Controllers.

/** Applies method (and the request parameter) decorators to `Class.prototype[method]`. */
function route(Class, method, decorators, parameters = [Req()]) {
  const descriptor = Object.getOwnPropertyDescriptor(Class.prototype, method);
  parameters.forEach((parameter, index) => parameter(Class.prototype, method, index));
  Object.defineProperty(Class.prototype, method, Reflect.decorate(decorators, Class.prototype, method, descriptor));
}

const originOf = (request) => ({ clientAddress: request.ip, requestId: request.id });

class RegionKeysController {
  getMyRegion(request) {
    return regionJson(request.user.rows);
  }

  async createKey(request, reply) {
    const { error, description } = parseCreateBody(request.body);
    if (error) throw invalid('The request has invalid or unexpected values; see errors.');
    const created = await createKey(pool, request.user.rows, description, originOf(request), MAX_KEYS);
    if (!created)
      throw new Problem(
        409,
        'api-key-limit',
        'Too many API keys',
        `A region can hold at most ${MAX_KEYS} active API keys.`,
      );
    reply.header('location', absoluteUrl(request, undefined, `/auth/region/api-keys/${created.id}`));
    return created;
  }

  async revokeKey(request) {
    const { id } = request.params;
    if (!UUID.test(id)) throw invalid('id must be a UUID.');
    const outcome = await revokeKey(pool, request.user.rows, id, originOf(request));
    if (outcome === 'not-found')
      throw new Problem(404, 'not-found', 'Not found', 'No active API key with this id exists in your region.');
    if (outcome === 'last')
      throw new Problem(
        409,
        'last-api-key',
        'Cannot delete the last API key',
        'A region must keep at least one active API key.',
      );
  }
}
Reflect.decorate([Controller('auth')], RegionKeysController);
route(RegionKeysController, 'getMyRegion', [Get('regions/me'), UseGuards(ApiKeyGuard)]);
route(
  RegionKeysController,
  'createKey',
  [Post('region/api-keys'), UseGuards(ApiKeyGuard), Header('Cache-Control', 'no-store')],
  [Req(), Res({ passthrough: true })],
);
route(RegionKeysController, 'revokeKey', [Delete('region/api-keys/:id'), UseGuards(ApiKeyGuard), HttpCode(204)]);

class MeController {
  me(request) {
    return userJson(request.user);
  }
}
Reflect.decorate([Controller('me')], MeController);
route(MeController, 'me', [Get(), UseGuards(UserGuard)]);

class PlanetsController {
  async list(request, reply) {
    const page = await planetsPage(pool, request.query);
    if (!page) throw invalid('limit is 1..100, offset 0 or more.');
    reply.headers(page.headers);
    return page.body;
  }
}
Reflect.decorate([Controller('planets')], PlanetsController);
route(PlanetsController, 'list', [Get()], [Req(), Res({ passthrough: true })]);

class HealthController {
  async health() {
    await pool.query('SELECT 1');
    return { status: 'ok', database: 'up' };
  }
}
Reflect.decorate([Controller('health')], HealthController);
route(HealthController, 'health', [Get()], []);

class CeilingModule {}
Reflect.decorate(
  [
    Module({
      controllers: [RegionKeysController, MeController, PlanetsController, HealthController],
      providers: [ApiKeyStrategy, BasicStrategy, JwtStrategy],
    }),
  ],
  CeilingModule,
);

const logger = createRootLogger({ level: env.LOG_LEVEL ?? 'info' });
const adapter = new FastifyAdapter({
  loggerInstance: logger,
  logController: new OneLinePerRequest(logger),
  genReqId: requestIdOf,
  bodyLimit: 64 * 1024,
});
const app = await NestFactory.create(CeilingModule, adapter, { logger: ['error', 'warn'] });
app
  .getHttpAdapter()
  .getInstance()
  .addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    reply.headers(SECURITY_HEADERS);
  });
// As the service's edge adds them (src/common/http/edge.ts).
const fastify = app.getHttpAdapter().getInstance();
fastify.addHook('onRequest', settleAcceptEncoding);
fastify.addHook('onRoute', keepSecretsUncompressed);
await app.register(fastifyCompress, COMPRESSION_OPTIONS);
fastify.addHook('onRoute', tagCodedRepresentations);
app.useGlobalFilters(new ProblemFilter());
await app.listen(Number(env.PORT), '127.0.0.1');
process.once('SIGTERM', async () => {
  await app.close();
  await pool.end();
  redis.disconnect();
  process.exit(0);
});
