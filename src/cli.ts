import './runtime-check';
import './config/load-env-file';
import './tracing';
import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { DynamicModule, INestApplicationContext, Module, Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import pino from 'pino';
import { ClockModule } from './common/clock/clock.module';
import { createRootLogger, PinoNestLogger } from './common/logging/logger';
import { stopTracing } from './common/tracing/tracing';
import { MetricsModule } from './common/metrics/metrics.module';
import { AppConfig, loadConfig } from './config/app-config';
import { ConfigModule } from './config/config.module';
import { DatabaseModule } from './database/database.module';
import { parseCidr } from './region-keys/address-allowlist';
import { generateApiKey } from './region-keys/api-key-codec';
import { type Permission, PERMISSIONS } from './region-keys/permissions';
import { RegionKeysModule } from './region-keys/region-keys.module';
import { SandboxModule } from './sandbox/sandbox.module';
import { SandboxService } from './sandbox/sandbox.service';
import { RegionEventDto } from './region-keys/dto/region-event.dto';
import type { ApiKeyRecord } from './region-keys/region-keys.repository';
import { OPERATOR, RegionKeysService } from './region-keys/region-keys.service';

const USAGE = `Usage: npm run --silent cli -- <command> [options]

Commands:
  region create --name <name> [--description <text>] [--allow-cidr <cidr>]... [--json]
      Create a region and its first API key (it holds every permission); prints
      the key (shown only once).
  region list [--json]
      List regions.
  key create --region <id> [--description <text>] [--permission <p>]...
             [--allow-cidr <cidr>]... [--json]
      Create an API key for a region (e.g. one that has lost its keys).
      --permission: region:read or keys:write, repeatable (default: both).
      --allow-cidr: an IPv4 or IPv6 CIDR the key may be used from, repeatable
      (default: any address).
  key generate [--json]
      Print a new key in the generated format of the configured API_ENVIRONMENT
      (rk_ live, rk_test_ sandbox), stored nowhere: a value for
      INITIAL_REGION_API_KEY. Needs no database.
  region events --region <id> [--json]
      List a region's events (keys created, rolled and revoked), newest first.
  sandbox reset [--json]
      Sandbox only (API_ENVIRONMENT=sandbox): empty the database and seed it again
      with the sample planets and a region, whose key is INITIAL_REGION_API_KEY when
      set, else a new one (shown only once). Refused by a live configuration.

Uses the same configuration as the server (DATABASE_URL, or the embedded database in DATA_DIR).`;

class UsageError extends Error {}

/** What the commands need: the configuration, the database (migrated on open), the region keys, and what a command adds. */
@Module({})
class OperatorModule {
  static forRoot(config: AppConfig, extra: Type[]): DynamicModule {
    return { module: OperatorModule, imports: [ConfigModule.forRoot(config), DatabaseModule, ClockModule, MetricsModule.off(), RegionKeysModule, ...extra] };
  }
}

type Output = { lines: string[]; value: unknown };
type Execute = (context: INestApplicationContext) => Promise<Output>;
/** A parsed command: what it runs, the modules it needs besides the region keys', and whether it is for a sandbox only. */
type Command = { execute: Execute; modules?: Type[]; sandboxOnly?: boolean };

function parseArguments(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        description: { type: 'string' },
        region: { type: 'string' },
        permission: { type: 'string', multiple: true },
        'allow-cidr': { type: 'string', multiple: true },
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
  if (command === 'key generate') {
    const key = generateApiKey(loadConfig().API_ENVIRONMENT);
    process.stdout.write(values.json ? `${JSON.stringify({ key })}\n` : `${key}\n`);
    return;
  }
  // Arguments are checked before the database is opened: a typo answers at once.
  const { execute, modules = [], sandboxOnly = false } = parseCommand(command, values);
  const config = loadConfig();
  // A live configuration never opens its database for a sandbox command.
  if (sandboxOnly && !config.isSandbox) {
    throw new Error(
      `\`${command}\` is for a sandbox, and this configuration is live (API_ENVIRONMENT=${config.API_ENVIRONMENT}); nothing was changed. ` +
        "Run it with the sandbox's settings: API_ENVIRONMENT=sandbox and the sandbox's DATABASE_URL or DATA_DIR.",
    );
  }
  // stdout carries only the command's output; warnings and errors go to stderr as JSON lines.
  const logger = new PinoNestLogger(createRootLogger({ level: 'warn', destination: pino.destination(2) }));
  const context = await NestFactory.createApplicationContext(OperatorModule.forRoot(config, modules), { logger, abortOnError: false });
  try {
    const output = await execute(context);
    process.stdout.write(values.json ? `${JSON.stringify(output.value)}\n` : `${output.lines.join('\n')}\n`);
  } finally {
    await context.close();
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

function requireRegionId(value: string | undefined): string {
  const regionId = requireText(value, 'region', 36);
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(regionId)) {
    throw new UsageError('--region must be a region id (UUID); see `region list`');
  }
  return regionId;
}

function optionalPermissions(values: string[] | undefined): Permission[] | undefined {
  if (values === undefined) return undefined;
  const unknown = values.find((value) => !(PERMISSIONS as readonly string[]).includes(value));
  if (unknown !== undefined) throw new UsageError(`--permission must be one of ${PERMISSIONS.join(', ')}; got ${JSON.stringify(unknown)}`);
  return values as Permission[];
}

/** Each --allow-cidr in canonical form; none given: null, any address. */
function optionalCidrs(values: string[] | undefined): string[] | null {
  if (values === undefined) return null;
  return values.map((value) => {
    const parsed = parseCidr(value.trim());
    if ('error' in parsed) throw new UsageError(`--allow-cidr ${JSON.stringify(value)} ${parsed.error}`);
    return parsed.cidr;
  });
}

const keyOutput = (apiKey: ApiKeyRecord, key: string) => ({
  id: apiKey.id,
  key,
  tokenPreview: apiKey.tokenPreview,
  description: apiKey.description,
  permissions: apiKey.permissions,
  allowedCidrs: apiKey.allowedCidrs,
});

const grantLines = (apiKey: ApiKeyRecord) => [
  `Permissions: ${apiKey.permissions.join(', ')}`,
  `Allowed from: ${apiKey.allowedCidrs ? apiKey.allowedCidrs.join(', ') : 'any address'}`,
];

const EVENTS_PER_QUERY = 100;

function describeEvent(event: RegionEventDto): string {
  const actor = event.actor.type === 'api_key' ? `key ${event.actor.tokenPreview} (${event.actor.apiKeyId})` : 'operator';
  const stops = event.apiKey.revokesAt ? ` stops ${event.apiKey.revokesAt}` : '';
  const grant = event.apiKey.permissions
    ? ` grants ${event.apiKey.permissions.join(',')} from ${event.apiKey.allowedCidrs?.join(',') ?? 'any address'}`
    : '';
  const from = event.clientAddress ? ` from ${event.clientAddress} request ${event.requestId}` : '';
  return `${event.occurredAt}  ${event.type.padEnd(15)}  key ${event.apiKey.tokenPreview} (${event.apiKey.id})${stops}${grant}  by ${actor}${from}`;
}

/** A command of the region keys, the module every command has. */
const regionKeys = (run: (service: RegionKeysService) => Promise<Output>): Command => ({
  execute: (context) => run(context.get(RegionKeysService)),
});

type CommandValues = { name?: string; description?: string; region?: string; permission?: string[]; 'allow-cidr'?: string[] };

function parseCommand(command: string, values: CommandValues): Command {
  switch (command) {
    case 'region create': {
      const name = requireText(values.name, 'name', 100);
      const description = optionalDescription(values.description);
      // The first key always manages the region (the last-key rule keeps one that does).
      if (values.permission !== undefined) throw new UsageError("--permission is for `key create`; a region's first key holds every permission");
      const allowedCidrs = optionalCidrs(values['allow-cidr']);
      return regionKeys(async (service) => {
        const { region, apiKey, key } = await service.createRegion(name, description, allowedCidrs);
        return {
          value: {
            region: { id: region.id, name: region.name },
            apiKey: keyOutput(apiKey, key),
          },
          lines: [
            `Region:    ${region.name} (${region.id})`,
            `Key id:    ${apiKey.id}`,
            `X-API-Key: ${key}`,
            ...grantLines(apiKey),
            'The key is shown only now. Store it safely.',
          ],
        };
      });
    }
    case 'key create': {
      const regionId = requireRegionId(values.region);
      const description = optionalDescription(values.description);
      const permissions = optionalPermissions(values.permission);
      const allowedCidrs = optionalCidrs(values['allow-cidr']);
      return regionKeys(async (service) => {
        const { apiKey, key } = await service.createKey(regionId, { description, permissions, allowedCidrs }, OPERATOR);
        return {
          value: { apiKey: keyOutput(apiKey, key) },
          lines: [`Key id:    ${apiKey.id}`, `X-API-Key: ${key}`, ...grantLines(apiKey), 'The key is shown only now. Store it safely.'],
        };
      });
    }
    case 'region events': {
      const regionId = requireRegionId(values.region);
      return regionKeys(async (service) => {
        if (!(await service.regionExists(regionId))) throw new Error(`No region with id ${regionId} exists.`);
        const events: RegionEventDto[] = [];
        let cursor: string | null | undefined;
        do {
          const page = await service.listEvents(regionId, EVENTS_PER_QUERY, cursor ?? undefined);
          events.push(...page.events.map(RegionEventDto.from));
          cursor = page.next;
        } while (cursor);
        return { value: { events }, lines: events.length === 0 ? ['No events.'] : events.map(describeEvent) };
      });
    }
    case 'region list':
      return regionKeys(async (service) => {
        const regions = await service.listRegions();
        return {
          value: { regions: regions.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt.toISOString() })) },
          lines: regions.length === 0 ? ['No regions.'] : regions.map((r) => `${r.id}  ${r.name}`),
        };
      });
    case 'sandbox reset':
      return {
        modules: [SandboxModule],
        sandboxOnly: true,
        execute: async (context) => {
          const reset = await context.get(SandboxService).reset();
          return {
            value: reset,
            lines: [
              `Emptied: ${reset.tables.join(', ')}`,
              `Seeded:  ${reset.samplePlanets} sample planets`,
              `Region:  ${reset.region.name} (${reset.region.id})`,
              `Key id:  ${reset.apiKey.id}`,
              ...(reset.key
                ? [`X-API-Key: ${reset.key}`, 'The key is shown only now. Store it safely.']
                : [`X-API-Key: the one in INITIAL_REGION_API_KEY (${reset.apiKey.tokenPreview})`]),
            ],
          };
        },
      };
    default:
      throw new UsageError(`Unknown command: ${command}`);
  }
}

main(process.argv.slice(2)).finally(stopTracing).then(
  () => process.exit(0),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`error: ${message}\n`);
    if (err instanceof UsageError) process.stderr.write(`\n${USAGE}\n`);
    process.exit(err instanceof UsageError ? 2 : 1);
  },
);
