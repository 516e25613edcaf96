import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

import { HANDED_DOWN, makeDatabaseTemplates } from './database-templates';

/**
 * Builds dist/ as `npm run build` does (some tests start the compiled server or CLI as a real
 * process: a second process on one DATA_DIR, the operator CLI), writes the OpenAPI metadata
 * that apps started in a test load (openapi-metadata.ts), then makes the migrated databases
 * every test database is copied from (see database-templates.ts). A run started by another
 * with its templates handed down (HANDED_DOWN) neither builds nor migrates.
 */
export default async function globalSetup(): Promise<void> {
  // The tests start the server and the CLI as processes a few hundred times: with V8's code
  // cache kept between them, each loads its modules in about half the time. (The jest
  // workers, started after this, inherit it too.)
  process.env.NODE_COMPILE_CACHE ??= resolve('node_modules/.cache/node-compile-cache');
  if (!process.env[HANDED_DOWN]) {
    execFileSync(process.execPath, [require.resolve('@nestjs/cli/bin/nest.js'), 'build'], { stdio: 'inherit' });
  }
  execFileSync(process.execPath, ['scripts/openapi-metadata.mjs'], { stdio: 'inherit' });
  removeOrphans('dist');
  await makeDatabaseTemplates();
}

/**
 * Deletes compiled files whose source is gone: the entity and migration globs would still
 * find a moved or deleted migration there. (dist/ is not emptied first because another
 * test run in this checkout may be using it.)
 */
function removeOrphans(dist: string): void {
  if (!existsSync(dist)) return;
  for (const entry of readdirSync(dist, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const compiled = join(entry.parentPath, entry.name);
    const source = relative(dist, compiled).replace(/(\.d)?\.js(\.map)?$|\.d\.ts$/, '.ts');
    if (source.endsWith('.ts') && !existsSync(source)) rmSync(compiled);
  }
}
