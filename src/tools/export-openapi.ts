import 'reflect-metadata';

import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';

import { createApp } from '../app';
import { buildOpenApiDocument } from '../common/swagger/openapi';
import { loadConfig } from '../config/app-config';
import { FEATURE_SETTINGS } from '../feature-settings';

/**
 * Writes the OpenAPI document the code produces to openapi.json (committed, so every API
 * change shows in review; a test fails when the two differ). Run: npm run openapi:export
 */
async function main(): Promise<void> {
  // A throwaway in-memory database; the initial key only keeps the first-start banner quiet.
  const config = loadConfig(
    {
      ...process.env,
      DATA_DIR: 'memory://',
      DATABASE_URL: '',
      LOG_LEVEL: 'error',
      NODE_ENV: 'test',
      // Nothing is served: no metrics listener to collide with a running server's.
      METRICS_PORT: '0',
      INITIAL_REGION_API_KEY: randomBytes(24).toString('hex'),
      // The committed document is the live one, with no deployment's addresses in it.
      API_ENVIRONMENT: 'live',
      PUBLIC_BASE_URL: '',
      SANDBOX_BASE_URL: '',
    },
    FEATURE_SETTINGS,
  );
  const app = await createApp({ config });
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
