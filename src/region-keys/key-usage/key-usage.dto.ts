import { ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsIn, IsInt, IsOptional, Max, Min } from 'class-validator';

import { ApiDate, ApiDateTime, ApiInteger } from '../../common/swagger';
import { toInt } from '../../common/validation';
import type { DailyUsage, HourlyUsage, KeyClient } from './key-usage.types';
import { USAGE_RETENTION_DAYS } from './key-usage-counter';

export const DEFAULT_USAGE_DAYS = 30;
export const USAGE_GRANULARITIES = ['day', 'hour'] as const;
export type UsageGranularity = (typeof USAGE_GRANULARITIES)[number];

export class KeyUsageQueryDto {
  /** How many UTC days to list, today included. Only with `granularity=day`. */
  // Optional, with a default; the plugin reads a validator's bound only when it is written as a number.
  // No initializer: a `days` sent with granularity=hour must be seen, to be refused.
  @ApiInteger({ required: false, maximum: USAGE_RETENTION_DAYS, default: DEFAULT_USAGE_DAYS })
  @IsOptional()
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(USAGE_RETENTION_DAYS)
  days?: number;

  /**
   * `day`: one count per UTC day of the last `days` (a `KeyUsage`); `hour`: one count per UTC hour of the last 168, the
   * current hour last (a `KeyHourlyUsage`).
   */
  @IsOptional()
  @IsIn(USAGE_GRANULARITIES)
  granularity?: UsageGranularity = 'day';
}

@ApiSchema({ name: 'KeyUsageDay' })
export class KeyUsageDayDto {
  /**
   * A UTC day.
   * @example 2026-11-22
   */
  @ApiDate()
  date: string;

  /**
   * Requests the key authenticated that day.
   * @example 1520
   */
  @ApiInteger({ minimum: 0 })
  requests: number;
}

@ApiSchema({ name: 'KeyUsage' })
export class KeyUsageDto {
  /** Every day of the window, oldest first; days without requests are 0. */
  data: KeyUsageDayDto[];

  static from(days: DailyUsage[]): KeyUsageDto {
    return { data: days };
  }
}

@ApiSchema({ name: 'KeyUsageHour' })
export class KeyUsageHourDto {
  /**
   * The start of a UTC hour.
   * @example 2026-11-22T10:00:00Z
   */
  @ApiDateTime()
  hour: string;

  /**
   * Requests the key authenticated in that hour.
   * @example 64
   */
  @ApiInteger({ minimum: 0 })
  requests: number;
}

@ApiSchema({ name: 'KeyHourlyUsage' })
export class KeyHourlyUsageDto {
  /** The last 168 UTC hours, oldest first, ending with the current hour; hours without requests are 0. */
  data: KeyUsageHourDto[];

  static from(hours: HourlyUsage[]): KeyHourlyUsageDto {
    return { data: hours };
  }
}

@ApiSchema({ name: 'KeyClient' })
export class KeyClientDto {
  /**
   * The client address, as the server resolves it (behind a load balancer, per the operator's TRUST_PROXY), in one
   * spelling: IPv4 (also when the client reached the server as IPv4-mapped IPv6), or IPv6 in RFC 5952's form.
   * @example 203.0.113.7
   */
  address: string;

  /**
   * The client's User-Agent, cut at 200 characters, control characters shown as U+FFFD; null when it sent none (or
   * an empty one).
   * @example timetable-sync/2.4 (+https://example.com)
   */
  userAgent: string | null;

  /**
   * The client's first request with the key (of those still kept: a client not seen for 30 days is forgotten).
   * @example 2026-11-02T08:00:12.000Z
   */
  @ApiDateTime()
  firstSeenAt: string;

  /**
   * The client's latest request with the key.
   * @example 2026-11-22T10:14:59.000Z
   */
  @ApiDateTime()
  lastSeenAt: string;

  /**
   * Requests the client made with the key since `firstSeenAt`.
   * @example 8640
   */
  @ApiInteger({ minimum: 1 })
  requests: number;
}

@ApiSchema({ name: 'KeyClients' })
export class KeyClientsDto {
  /** Most recent first, at most 100. */
  data: KeyClientDto[];

  static from(clients: KeyClient[]): KeyClientsDto {
    return {
      data: clients.map((client) => ({
        ...client,
        firstSeenAt: client.firstSeenAt.toISOString(),
        lastSeenAt: client.lastSeenAt.toISOString(),
      })),
    };
  }
}
