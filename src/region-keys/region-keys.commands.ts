import type { INestApplicationContext } from '@nestjs/common';

import { type CliCommand, cliCommand, type CliExecute, type CliOutput, requireText, UsageError } from '../common/cli';
import { ValidationFailedError } from '../common/problem';
import { isDateTime } from '../common/validation';
import { AppConfig } from '../config';
import { parseCidr } from './address-allowlist';
import { generateApiKey } from './api-key-codec';
import { RegionEventDto } from './dto/region-event.dto';
import { formatRateLimit, type KeyRateLimit, parseRateLimit } from './key-rate-limit';
import { LeakedKeysService } from './leaked-keys.service';
import { type Permission, PERMISSIONS } from './permissions';
import { RegionKeysModule } from './region-keys.module';
import type { ApiKeyRecord } from './region-keys.repository';
import { RegionKeysService } from './region-keys.service';
import { OPERATOR } from './region-keys.types';

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
  if (unknown !== undefined)
    throw new UsageError(`--permission must be one of ${PERMISSIONS.join(', ')}; got ${JSON.stringify(unknown)}`);
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

/** An RFC 3339 date-time with an offset; how far ahead it may be, the service checks against its clock. */
function optionalExpiry(value: string | undefined): string | null {
  if (value === undefined) return null;
  if (!isDateTime(value.trim()))
    throw new UsageError(`--expires-at must be an RFC 3339 date-time with an offset, e.g. 2027-03-01T00:00:00Z`);
  return value.trim();
}

/** `<requests>/<seconds>`, as REGION_KEY_RATE_LIMIT; none given: null, the region default. */
function optionalRateLimit(value: string | undefined): KeyRateLimit | null {
  if (value === undefined) return null;
  const rateLimit = parseRateLimit(value.trim());
  if (!rateLimit)
    throw new UsageError(
      '--rate-limit must be <requests>/<seconds>, such as 600/60: requests 1 to 100000, seconds 1 to 3600',
    );
  return rateLimit;
}

const keyOutput = (apiKey: ApiKeyRecord, key: string) => ({
  id: apiKey.id,
  key,
  tokenPreview: apiKey.tokenPreview,
  description: apiKey.description,
  permissions: apiKey.permissions,
  allowedCidrs: apiKey.allowedCidrs,
  expiresAt: apiKey.expiresAt?.toISOString() ?? null,
  rateLimit: apiKey.rateLimit,
});

/** A new key as text: shown only now. */
const newKeyLines = (apiKey: ApiKeyRecord, key: string) => [
  `Key id:    ${apiKey.id}`,
  `X-API-Key: ${key}`,
  `Permissions: ${apiKey.permissions.join(', ')}`,
  `Allowed from: ${apiKey.allowedCidrs ? apiKey.allowedCidrs.join(', ') : 'any address'}`,
  `Expires:   ${apiKey.expiresAt ? apiKey.expiresAt.toISOString() : 'never'}`,
  `Rate limit: ${apiKey.rateLimit ? formatRateLimit(apiKey.rateLimit) : 'the default (REGION_KEY_RATE_LIMIT)'}`,
  'The key is shown only now. Store it safely.',
];

const EVENTS_PER_QUERY = 100;

function describeEvent(event: RegionEventDto): string {
  const actor =
    event.actor.type === 'api_key' ? `key ${event.actor.tokenPreview} (${event.actor.apiKeyId})` : event.actor.type;
  const stops = event.apiKey.revokesAt ? ` stops ${event.apiKey.revokesAt}` : '';
  const expires = event.apiKey.expiresAt ? ` expires ${event.apiKey.expiresAt}` : '';
  const changes = event.changes ? ` sets ${JSON.stringify(event.changes)}` : '';
  const { permissions, allowedCidrs, rateLimit } = event.apiKey;
  const rate =
    rateLimit === undefined ? '' : ` at ${rateLimit ? formatRateLimit(rateLimit) : 'the default rate limit'}`;
  const grant = permissions
    ? ` grants ${permissions.join(',')} from ${allowedCidrs?.join(',') ?? 'any address'}${rate}`
    : '';
  const from = event.clientAddress ? ` from ${event.clientAddress} request ${event.requestId}` : '';
  return `${event.occurredAt}  ${event.type.padEnd(15)}  key ${event.apiKey.tokenPreview} (${event.apiKey.id})${stops}${expires}${grant}${changes}  by ${actor}${from}`;
}

/** Work with the region keys service. */
const withRegionKeys =
  (run: (service: RegionKeysService) => Promise<CliOutput>): CliExecute =>
  (context: INestApplicationContext) =>
    run(context.get(RegionKeysService));

const DESCRIPTION = { type: 'string' } as const;
const PERMISSION = { type: 'string', multiple: true } as const;
const ALLOW_CIDR = { type: 'string', multiple: true } as const;
const REGION = { type: 'string' } as const;
const EXPIRES_AT = { type: 'string' } as const;
const RATE_LIMIT = { type: 'string' } as const;

/** The operator's commands for regions and their keys, in the order of the usage text. */
export const REGION_KEYS_COMMANDS: CliCommand[] = [
  cliCommand({
    name: 'region create',
    synopsis: ['--name <name> [--description <text>] [--allow-cidr <cidr>]... [--json]'],
    description: [
      'Create a region and its first API key (it holds every permission); prints',
      'the key (shown only once).',
    ],
    options: { name: { type: 'string' }, description: DESCRIPTION, permission: PERMISSION, 'allow-cidr': ALLOW_CIDR },
    modules: [RegionKeysModule],
    parse: (values) => {
      const name = requireText(values.name, 'name', 100);
      const description = optionalDescription(values.description);
      // The first key always manages the region (the last-key rule keeps one that does).
      if (values.permission !== undefined)
        throw new UsageError("--permission is for `key create`; a region's first key holds every permission");
      const allowedCidrs = optionalCidrs(values['allow-cidr']);
      return withRegionKeys(async (service) => {
        const { region, apiKey, key } = await service.createRegion(name, description, allowedCidrs);
        return {
          value: {
            region: { id: region.id, name: region.name },
            apiKey: keyOutput(apiKey, key),
          },
          lines: [`Region:    ${region.name} (${region.id})`, ...newKeyLines(apiKey, key)],
        };
      });
    },
  }),
  cliCommand({
    name: 'region list',
    synopsis: ['[--json]'],
    description: ['List regions.'],
    modules: [RegionKeysModule],
    parse: () =>
      withRegionKeys(async (service) => {
        const regions = await service.listRegions();
        return {
          value: { regions: regions.map((r) => ({ id: r.id, name: r.name, createdAt: r.createdAt.toISOString() })) },
          lines: regions.length === 0 ? ['No regions.'] : regions.map((r) => `${r.id}  ${r.name}`),
        };
      }),
  }),
  cliCommand({
    name: 'key create',
    synopsis: [
      '--region <id> [--description <text>] [--permission <p>]...',
      '[--allow-cidr <cidr>]... [--expires-at <date-time>] [--rate-limit <requests>/<seconds>]',
      '[--json]',
    ],
    description: [
      'Create an API key for a region (e.g. one that has lost its keys).',
      '--permission: region:read or keys:write, repeatable (default: both).',
      '--allow-cidr: an IPv4 or IPv6 CIDR the key may be used from, repeatable',
      '(default: any address).',
      '--expires-at: when the key stops working, an RFC 3339 date-time at least',
      'a minute and at most API_KEY_MAX_LIFETIME_DAYS ahead (default: never).',
      '--rate-limit: the requests the key may make per window of seconds, such as',
      '600/60 (default: REGION_KEY_RATE_LIMIT, which applies to keys without one).',
    ],
    options: {
      region: REGION,
      description: DESCRIPTION,
      permission: PERMISSION,
      'allow-cidr': ALLOW_CIDR,
      'expires-at': EXPIRES_AT,
      'rate-limit': RATE_LIMIT,
    },
    modules: [RegionKeysModule],
    parse: (values) => {
      const regionId = requireRegionId(values.region);
      const description = optionalDescription(values.description);
      const permissions = optionalPermissions(values.permission);
      const allowedCidrs = optionalCidrs(values['allow-cidr']);
      const expiresAt = optionalExpiry(values['expires-at']);
      const rateLimit = optionalRateLimit(values['rate-limit']);
      return withRegionKeys(async (service) => {
        const { region, apiKey, key } = await service
          .createKey(regionId, { description, permissions, allowedCidrs, expiresAt, rateLimit }, OPERATOR)
          .catch((err: unknown) => {
            // The service names the field as an HTTP client sends it; here it is an option.
            if (err instanceof ValidationFailedError)
              throw new UsageError(`--expires-at: ${err.errors.map((e) => e.message).join('; ')}`);
            throw err;
          });
        return {
          // The shape of `region create`'s, so that one reader takes both.
          value: { region: { id: region.id, name: region.name }, apiKey: keyOutput(apiKey, key) },
          lines: newKeyLines(apiKey, key),
        };
      });
    },
  }),
  cliCommand({
    name: 'key generate',
    synopsis: ['[--json]'],
    description: [
      'Print a new key in the generated format of the configured API_ENVIRONMENT',
      '(rk_ live, rk_test_ sandbox), stored nowhere: a value for',
      'INITIAL_REGION_API_KEY. Needs no database.',
    ],
    parse: () => (context) => {
      const key = generateApiKey(context.get(AppConfig).API_ENVIRONMENT);
      return Promise.resolve({ value: { key }, lines: [key] });
    },
  }),
  cliCommand({
    name: 'key leaked',
    synopsis: ['[--json]'],
    description: [
      'List the active keys, of every region, reported as leaked but kept working',
      "as their region's last managing key (leakReportedAt): each must be rolled.",
    ],
    modules: [RegionKeysModule],
    parse: () => async (context) => {
      const keys = await context.get(LeakedKeysService).listFlagged();
      const value = keys.map((key) => ({
        regionId: key.regionId,
        id: key.id,
        tokenPreview: key.tokenPreview,
        description: key.description,
        leakReportedAt: key.leakReportedAt!.toISOString(),
      }));
      const lines = value.map(
        (key) => `${key.leakReportedAt}  region ${key.regionId}  key ${key.tokenPreview} (${key.id})`,
      );
      return {
        value: { keys: value },
        lines: lines.length === 0 ? ['No key reported as leaked is still active.'] : lines,
      };
    },
  }),
  cliCommand({
    name: 'region events',
    synopsis: ['--region <id> [--json]'],
    description: ["List a region's events (keys created, rolled, updated and revoked), newest first."],
    options: { region: REGION },
    modules: [RegionKeysModule],
    parse: (values) => {
      const regionId = requireRegionId(values.region);
      return withRegionKeys(async (service) => {
        if (!(await service.regionExists(regionId))) throw new Error(`No region with id ${regionId} exists.`);
        const events: RegionEventDto[] = [];
        let cursor: string | null | undefined;
        do {
          const page = await service.listEvents(regionId, EVENTS_PER_QUERY, cursor ?? undefined);
          events.push(...page.events.map((event) => RegionEventDto.from(event)));
          cursor = page.next;
        } while (cursor);
        return { value: { events }, lines: events.length === 0 ? ['No events.'] : events.map(describeEvent) };
      });
    },
  }),
];
