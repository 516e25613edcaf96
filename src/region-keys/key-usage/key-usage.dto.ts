import { ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

import { ApiDate, ApiInteger } from '../../common/swagger';
import { toInt } from '../../common/validation';
import type { DailyUsage } from './key-usage.types';
import { USAGE_RETENTION_DAYS } from './key-usage-counter';

export const DEFAULT_USAGE_DAYS = 30;

export class KeyUsageQueryDto {
  /** How many UTC days to list, today included. */
  // Optional, with a default; the plugin reads a validator's bound only when it is written as a number.
  @ApiInteger({ required: false, maximum: USAGE_RETENTION_DAYS, default: DEFAULT_USAGE_DAYS })
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(USAGE_RETENTION_DAYS)
  days: number = DEFAULT_USAGE_DAYS;
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
