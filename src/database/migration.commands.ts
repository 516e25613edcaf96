import type { INestApplicationContext } from '@nestjs/common';
import type { DataSource } from 'typeorm';

import { type CliCommand, cliCommand, type CliOutput } from '../common/cli';
import { AppConfig } from '../config/app-config';
import { openDatabase } from './data-source';
import { refuseOtherEnvironment } from './environment-stamp';
import { migrationStatus, revertLastMigrationLocked, runMigrationsLocked } from './migration-runner';

/**
 * Opens the database without migrating it (what the server and the other commands do on
 * open), refuses it when it is the other environment's, runs `work`, and closes it.
 */
async function onDatabase(
  context: INestApplicationContext,
  work: (db: DataSource, config: AppConfig) => Promise<CliOutput>,
) {
  const config = context.get(AppConfig);
  const { dataSource, embedded } = await openDatabase(config);
  try {
    await dataSource.initialize();
    await refuseOtherEnvironment(dataSource, config.API_ENVIRONMENT);
    return await work(dataSource, config);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

/**
 * The schema's commands, run from the built code as it is installed (no devDependencies,
 * nothing rebuilt or deleted): what an upgrade or a rollback needs.
 */
export const MIGRATION_COMMANDS: CliCommand[] = [
  cliCommand({
    name: 'migration show',
    synopsis: ['[--json]'],
    description: [
      "List this build's migrations, applied [X] or pending [ ], and those applied that",
      'this build does not know [?] (a newer build made them). Changes nothing.',
    ],
    parse: () => (context) =>
      onDatabase(context, async (db, config) => {
        const status = await migrationStatus(db, config);
        return {
          value: status,
          lines: [
            ...status.applied.map((name) => `[X] ${name}`),
            ...status.unknown.map((name) => `[?] ${name} (not in this build)`),
            ...status.pending.map((name) => `[ ] ${name}`),
          ],
        };
      }),
  }),
  cliCommand({
    name: 'migration run',
    synopsis: ['[--json]'],
    description: [
      'Apply the pending migrations, as a server does when it starts; refused when the',
      'database has migrations this build does not know.',
    ],
    parse: () => (context) =>
      onDatabase(context, async (db, config) => {
        const applied = await runMigrationsLocked(db, config);
        return {
          value: { applied },
          lines: [applied.length > 0 ? `Applied: ${applied.join(', ')}` : 'Nothing to apply: the schema is up to date'],
        };
      }),
  }),
  cliCommand({
    name: 'migration revert',
    synopsis: ['[--json]'],
    description: [
      'Revert the newest applied migration (run it once per migration to take back).',
      'For a rollback, run it with the newer build, then deploy the older one.',
    ],
    parse: () => (context) =>
      onDatabase(context, async (db, config) => {
        const reverted = await revertLastMigrationLocked(db, config);
        return { value: { reverted }, lines: [reverted ? `Reverted: ${reverted}` : 'Nothing to revert'] };
      }),
  }),
];
