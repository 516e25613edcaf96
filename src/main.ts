import './runtime-check';
import './config/load-env-file';
import './tracing';
import 'reflect-metadata';

import { Logger } from '@nestjs/common';

import { createApp } from './app';
import { ShutdownState } from './common/lifecycle/shutdown-state';
import { stopTracing } from './common/tracing/tracing';
import { loadConfig } from './config/app-config';
import { FEATURE_SETTINGS } from './feature-settings';

async function bootstrap(): Promise<void> {
  const config = loadConfig(process.env, FEATURE_SETTINGS);
  const app = await createApp({ config });
  await app.listen({ port: config.PORT, host: config.HOST });
  new Logger('Main').log(
    `Serving on http://${config.HOST}:${config.PORT} (Node ${process.version}, ${config.NODE_ENV})`,
  );

  const logger = new Logger('Shutdown');
  const shutdown = async (signal: NodeJS.Signals) => {
    // Readiness answers 503 from now on; during SHUTDOWN_DELAY_MS the listener still takes
    // requests, so that a load balancer sees the 503 and stops sending before any is refused.
    app.get(ShutdownState).begin();
    logger.log(`${signal} received: not ready any more; finishing in-flight requests, then closing the database`);
    // In-flight requests get the grace period; after it the process exits anyway.
    setTimeout(() => {
      logger.error(`Shutdown took longer than ${config.SHUTDOWN_DELAY_MS + config.SHUTDOWN_GRACE_MS} ms; exiting`);
      process.exit(1);
    }, config.SHUTDOWN_DELAY_MS + config.SHUTDOWN_GRACE_MS).unref();
    if (config.SHUTDOWN_DELAY_MS > 0) await new Promise((resolve) => setTimeout(resolve, config.SHUTDOWN_DELAY_MS));
    // app.close() stops accepting connections, waits for open requests, then runs the
    // modules' shutdown hooks (the database pool, the embedded database).
    // Then the spans still buffered are sent (stopTracing), before the exit.
    app
      .close()
      .then(stopTracing)
      .then(
        () => {
          logger.log('Stopped');
          process.exit(0);
        },
        (err: unknown) => {
          logger.error(`Shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
          process.exit(1);
        },
      );
  };
  process.once('SIGTERM', (signal) => void shutdown(signal));
  process.once('SIGINT', (signal) => void shutdown(signal));
}

bootstrap().catch((err: unknown) => {
  // Configuration and start-up errors are for a person at a terminal: the message, not a stack.
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
