import './runtime-check';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { loadConfig } from './config/app-config';
import { openDatabase } from './database/data-source';
import { RowLockGate } from './database/row-lock-gate';
import { runMigrationsLocked } from './database/migration-runner';
import { RegionKeysRepository } from './region-keys/region-keys.repository';
import { RegionKeysService } from './region-keys/region-keys.service';

const USAGE = `Usage: npm run --silent cli -- <command> [options]

Commands:
  region create --name <name> [--description <text>] [--json]
      Create a region and its first API key; prints the key (shown only once).
  region list [--json]
      List regions.
  key create --region <id> [--description <text>] [--json]
      Create an API key for a region (e.g. one that has lost its keys).

Uses the same configuration as the server (DATABASE_URL, or the embedded database in DATA_DIR).`;

class UsageError extends Error {}

type Output = { lines: string[]; value: unknown };
type Execute = (service: RegionKeysService) => Promise<Output>;

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        description: { type: 'string' },
        region: { type: 'string' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
      },
    });
  } catch (err) {
    throw new UsageError(err instanceof Error ? err.message : String(err));
  }
}

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArguments(argv);
  const command = positionals.join(' ');
  if (values.help || command === '') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  // Arguments are checked before the database is opened: a typo answers at once.
  const execute = parseCommand(command, values);
  const config = loadConfig();
  const { dataSource, embedded } = await openDatabase(config);
  try {
    await dataSource.initialize();
    await runMigrationsLocked(dataSource);
    const output = await execute(new RegionKeysService(dataSource, new RegionKeysRepository(dataSource), config, new RowLockGate(dataSource, config)));
    process.stdout.write(values.json ? `${JSON.stringify(output.value)}\n` : `${output.lines.join('\n')}\n`);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await embedded?.stop();
  }
}

function requireText(value: string | undefined, option: string, max: number): string {
  const text = value?.trim();
  if (!text) throw new UsageError(`--${option} is required`);
  if (text.length > max) throw new UsageError(`--${option} must be at most ${max} characters`);
  return text;
}

function optionalDescription(value: string | undefined): string | null {
  if (value === undefined) return null;
  return requireText(value, 'description', 255);
}

function parseCommand(command: string, values: { name?: string; description?: string; region?: string }): Execute {
  switch (command) {
    case 'region create': {
      const name = requireText(values.name, 'name', 100);
      const description = optionalDescription(values.description);
      return async (service) => {
        const { region, apiKey, key } = await service.createRegion(name, description);
        return {
          value: {
            region: { id: region.id, name: region.name },
            apiKey: { id: apiKey.id, key, tokenPreview: apiKey.tokenPreview, description: apiKey.description },
          },
          lines: [
            `Region:    ${region.name} (${region.id})`,
            `Key id:    ${apiKey.id}`,
            `X-API-Key: ${key}`,
            'The key is shown only now. Store it safely.',
          ],
        };
      };
    }
    case 'key create': {
      const regionId = requireText(values.region, 'region', 36);
      if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(regionId)) {
        throw new UsageError('--region must be a region id (UUID); see `region list`');
      }
      const description = optionalDescription(values.description);
      return async (service) => {
        const { apiKey, key } = await service.createKey(regionId, description);
        return {
          value: { apiKey: { id: apiKey.id, key, tokenPreview: apiKey.tokenPreview, description: apiKey.description } },
          lines: [`Key id:    ${apiKey.id}`, `X-API-Key: ${key}`, 'The key is shown only now. Store it safely.'],
        };
      };
    }
    case 'region list':
      return async (service) => {
        const regions = await service.listRegions();
        return {
          value: { regions: regions.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt.toISOString() })) },
          lines: regions.length === 0 ? ['No regions.'] : regions.map((r) => `${r.id}  ${r.name}`),
        };
      };
    default:
      throw new UsageError(`Unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    if (err instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
