import type { Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';
import type { DestinationStream } from 'pino';

import { AppModule } from './app.module';
import { clientErrorHandler } from './common/http/client-error';
import { registerEdge } from './common/http/edge';
import { environmentHeadersOf, requestIdOf } from './common/http/http-hooks';
import { httpServerLimits } from './common/http/server-limits';
import { trustProxyOption } from './common/http/trust-proxy';
import { LazyChildLogger } from './common/logging/lazy-child-logger';
import { createRootLogger, logProcessWarnings, OneLinePerRequest, PinoNestLogger } from './common/logging/logger';
import { routerErrorHandler } from './common/problem/problem.filter';
import { setupOpenApi } from './common/swagger/openapi';
import { type AppConfig, lookalikeSettingsOf, NodeEnv } from './config/app-config';
import { closeDatabaseOpenedWith } from './database/database.module';
import { UnusableKeyRefusal } from './region-keys';

export const JSON_BODY_LIMIT_BYTES = 64 * 1024;
const MAX_PARAM_LENGTH = 1000;

export interface CreateAppOptions {
  config: AppConfig;
  /** Where logs go (stdout when absent); tests pass a stream to read them. */
  logDestination?: DestinationStream;
  /** Modules the app imports besides its features; tests add one of their own. */
  modules?: Type[];
}

/** Builds the whole HTTP application, initialised but not listening. Used by main and by tests. */
export async function createApp({
  config,
  logDestination,
  modules,
}: CreateAppOptions): Promise<NestFastifyApplication> {
  const environmentHeaders = environmentHeadersOf(config.API_ENVIRONMENT);
  const logger = createRootLogger({
    level: config.LOG_LEVEL,
    format: config.LOG_FORMAT,
    development: config.NODE_ENV === NodeEnv.Development,
    destination: logDestination,
  });
  logProcessWarnings(logger);
  for (const line of lookalikeSettingsOf(config)) logger.warn(line);
  const adapter = new FastifyAdapter({
    loggerInstance: logger,
    bodyLimit: JSON_BODY_LIMIT_BYTES,
    genReqId: requestIdOf,
    logController: new OneLinePerRequest(logger),
    childLoggerFactory: LazyChildLogger.factory,
    trustProxy: trustProxyOption(config.TRUST_PROXY),
    // Long path parameters reach validation (a clear 400) instead of the router's 414.
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Answers made before the request hooks run: a sandbox marks them too.
    frameworkErrors: routerErrorHandler({
      baseUrl: config.ownBaseUrl,
      extraHeaders: environmentHeaders,
      maxParamLength: MAX_PARAM_LENGTH,
    }),
    clientErrorHandler: clientErrorHandler({ baseUrl: config.ownBaseUrl, extraHeaders: environmentHeaders }),
    // Requests that arrive on open connections while shutting down are still served (and
    // their connection closed); the database closes only after the last one.
    return503OnClosing: false,
    ...httpServerLimits(config),
  });
  let app: NestFastifyApplication | undefined;
  try {
    app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config, modules), adapter, {
      logger: new PinoNestLogger(logger),
      abortOnError: false,
    });
    await prepare(app, config, environmentHeaders);
    return app;
  } catch (err) {
    // A start that fails leaves nothing open, so that its caller (a test, or main, which
    // logs the error and exits) is not held by a database nobody will close. When Nest
    // itself failed there is no app to close, and only the database is known to be open.
    await app?.close().catch(() => undefined);
    await closeDatabaseOpenedWith(config);
    throw err;
  }
}

async function prepare(
  app: NestFastifyApplication,
  config: AppConfig,
  environmentHeaders: ReturnType<typeof environmentHeadersOf>,
): Promise<void> {
  // Every Fastify hook, in the order a request meets them; before the routes are declared.
  await registerEdge(app, {
    config,
    jsonBodyLimit: JSON_BODY_LIMIT_BYTES,
    environmentHeaders,
    // 401 for a missing or malformed key on @RegionKeyAuth(permission) routes, before Nest's guards.
    featurePreHandlers: [app.get(UnusableKeyRefusal).preHandler],
  });
  setupOpenApi(app, config);
  await app.init();
  // JSON only: Fastify and Nest would also accept text/plain and form bodies, which
  // this API neither documents nor wants (415 instead).
  app.getHttpAdapter().getInstance().removeContentTypeParser(['text/plain', 'application/x-www-form-urlencoded']);
}
