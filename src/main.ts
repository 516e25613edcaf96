import 'reflect-metadata';
import { createApp } from './app';
import { loadConfig } from './config/app-config';

async function bootstrap(): Promise<void> {
  const config = loadConfig();
  const app = await createApp({ config });
  app.enableShutdownHooks(['SIGTERM', 'SIGINT']);
  process.once('SIGTERM', () => forceExitAfter(config.SHUTDOWN_GRACE_MS));
  process.once('SIGINT', () => forceExitAfter(config.SHUTDOWN_GRACE_MS));
  await app.listen({ port: config.PORT, host: config.HOST });
}

/** In-flight requests get the grace period to finish; after it the process exits anyway. */
function forceExitAfter(ms: number): void {
  setTimeout(() => {
    process.stderr.write(`Shutdown took longer than ${ms} ms; exiting.\n`);
    process.exit(1);
  }, ms).unref();
}

bootstrap().catch((err: unknown) => {
  // Configuration and start-up errors are for a person at a terminal: the message, not a stack.
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`Failed to start: ${message}\n`);
  process.exit(1);
});
