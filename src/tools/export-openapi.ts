import 'reflect-metadata';

import { writeFileSync } from 'node:fs';

import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, NestFastifyApplication } from '@nestjs/platform-fastify';

import { AppModule } from '../app.module';
import { buildOpenApiDocument } from '../common/swagger/openapi';
import { loadConfig } from '../config/app-config';
import { FEATURE_SETTINGS } from '../feature-settings';

/**
 * Writes the OpenAPI document the code produces to openapi.json (committed, so every API
 * change shows in review; a test fails when the two differ). Run: npm run openapi:export
 */
async function main(): Promise<void> {
  const config = loadConfig(
    {
      ...process.env,
      DATABASE_URL: '',
      NODE_ENV: 'test',
      // The committed document is the live one, with no deployment's addresses in it.
      API_ENVIRONMENT: 'live',
      PUBLIC_BASE_URL: '',
      SANDBOX_BASE_URL: '',
    },
    FEATURE_SETTINGS,
  );
  // Nest's preview mode: the modules and their routes, none of their providers made, so no
  // database is opened (the embedded one's initdb alone took seconds). The document is read
  // from the controllers' metadata, as the running server's is.
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRoot(config), new FastifyAdapter(), {
    preview: true,
    logger: false,
    abortOnError: false,
  });
  try {
    const target = process.argv[2] ?? 'openapi.json';
    writeFileSync(target, `${JSON.stringify(buildOpenApiDocument(app, config), null, 2)}\n`);
    process.stdout.write(`Wrote ${target}\n`);
  } finally {
    await app.close();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
