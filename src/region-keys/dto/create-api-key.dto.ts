import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayNotEmpty,
  IsArray,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Length,
  ValidateBy,
  ValidateNested,
} from 'class-validator';

import { ApiDateTime } from '../../common/swagger';
import { IsDateTime, IsOmittable, IsPlainText, trim } from '../../common/validation';
import { parseCidr } from '../address-allowlist';
import { type Permission, PERMISSIONS } from '../permissions';
import { KeyRateLimitDto } from './key-rate-limit.dto';

export const MAX_ALLOWED_CIDRS = 50;

/** The rule of expiresAt on create, roll and PATCH; the service checks it against its clock. */
export const EXPIRES_AT_RULE =
  "An RFC 3339 date-time with an offset, at least 60 seconds ahead of the server's clock and at most " +
  'API_KEY_MAX_LIFETIME_DAYS (366 by default) days ahead, else 400. Once past it the key is refused like a revoked ' +
  'key (401), no longer listed, and answers 404 by its id; until then `GET /auth/regions/me` shows it. A key with an ' +
  'expiry never counts as the permanent managing key a region must keep.';

/** The rule of rateLimit on create, roll and PATCH. */
export const RATE_LIMIT_RULE =
  'At most `requests` requests (1 to 100000) in each window of `perSeconds` seconds (1 to 3600); null: the ' +
  "region's default. Never faster (requests / perSeconds) than the key making the request: else 403 " +
  '`rate-limit-above-caller`.';

/** The first entry of a list that is not a CIDR, with why; null when all are. */
function firstBadCidr(value: unknown): string | null {
  if (!Array.isArray(value)) return null;
  for (const [i, entry] of value.entries()) {
    if (typeof entry !== 'string' || entry.length > 64)
      return `allowedCidrs[${i}] must be a string of at most 64 characters`;
    const parsed = parseCidr(entry);
    if ('error' in parsed) return `allowedCidrs[${i}] (${JSON.stringify(entry)}) ${parsed.error}`;
  }
  return null;
}

const IsCidrList = () =>
  ValidateBy({
    name: 'isCidrList',
    validator: {
      validate: (value: unknown) => firstBadCidr(value) === null,
      defaultMessage: (args) => firstBadCidr(args?.value) ?? 'allowedCidrs must list CIDRs',
    },
  });

// Each valid CIDR in its canonical form (the service stores each network once); anything else
// is left for the validator to name.
const canonicalCidrs = ({ value }: { value: unknown }) =>
  Array.isArray(value)
    ? value.map((entry: unknown) => {
        if (typeof entry !== 'string') return entry;
        const parsed = parseCidr(entry);
        return 'cidr' in parsed ? parsed.cidr : entry;
      })
    : value;

@ApiSchema({ name: 'ApiKeyInput' })
export class CreateApiKeyDto {
  /** @example 'Timetable sync (production)' */
  @Transform(trim)
  @IsOptional()
  @IsString()
  @Length(1, 255)
  @IsPlainText({ description: 'What the key is for. Trimmed; absent or null means no description.' })
  description?: string | null;

  /**
   * What the new key may do: `region:read` (read the region, its keys and its events) and `keys:write` (create, roll and delete keys). Absent: the permissions of the key making the request. A key can grant only permissions it holds (else 403 `insufficient-permission`); an empty list is a 400.
   * @example ['region:read']
   */
  @IsOmittable()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(PERMISSIONS.length * 2)
  @IsIn(PERMISSIONS, { each: true })
  permissions?: Permission[];

  /**
   * The networks the new key may be used from: IPv4 or IPv6 CIDRs (a bare address is a /32 or /128), stored in canonical form, each network once. An IPv4-mapped network (`::ffff:192.0.2.0/120`) is stored as the IPv4 network it maps (`192.0.2.0/24`); an IPv6 network holding all of `::ffff:0:0/96` (such as `::/0`) is a 400, as it would admit every IPv4 client too. An empty list is a 400 (a key no address can use), and so is a network no client connects from (unspecified, multicast or broadcast addresses only). Requests from other addresses get 403 `address-not-allowed`. The address is the client address the server resolves (behind a proxy, per its TRUST_PROXY setting). Null: any address.
   * @example ['203.0.113.0/24', '2001:db8::/48']
   */
  // The plugin reads a validator's bound only when it is written as a number.
  @ApiProperty({ type: [String], maxItems: MAX_ALLOWED_CIDRS })
  @Transform(canonicalCidrs)
  @IsOptional()
  @IsArray()
  @ArrayNotEmpty()
  @ArrayMaxSize(MAX_ALLOWED_CIDRS)
  @IsCidrList()
  allowedCidrs?: string[] | null;

  /** @example 2027-03-01T00:00:00Z */
  @ApiDateTime({ description: `When the new key stops working by itself. Absent or null: never. ${EXPIRES_AT_RULE}` })
  @IsOptional()
  @IsDateTime()
  expiresAt?: string | null;

  @ApiProperty({
    type: KeyRateLimitDto,
    description: `The new key's own rate limit. Absent: that of the key making the request. ${RATE_LIMIT_RULE}`,
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => KeyRateLimitDto)
  rateLimit?: KeyRateLimitDto | null;
}
