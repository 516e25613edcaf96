import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';

import { toInt } from '../../common/validation';
import type { DailyUsage } from './key-usage.types';
import { USAGE_RETENTION_DAYS } from './key-usage-counter';

export const DEFAULT_USAGE_DAYS = 30;

export class KeyUsageQueryDto {
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: USAGE_RETENTION_DAYS,
    default: DEFAULT_USAGE_DAYS,
    description: 'How many UTC days to list, today included.',
  })
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(USAGE_RETENTION_DAYS)
  days: number = DEFAULT_USAGE_DAYS;
}

@ApiSchema({ name: 'KeyUsageDay' })
export class KeyUsageDayDto {
  @ApiProperty({ format: 'date', description: 'A UTC day.', example: '2026-11-22' })
  date: string;

  @ApiProperty({ type: 'integer', minimum: 0, description: 'Requests the key authenticated that day.', example: 1520 })
  requests: number;
}

@ApiSchema({ name: 'KeyUsage' })
export class KeyUsageDto {
  @ApiProperty({
    type: () => [KeyUsageDayDto],
    description: 'Every day of the window, oldest first; days without requests are 0.',
  })
  data: KeyUsageDayDto[];

  static from(days: DailyUsage[]): KeyUsageDto {
    return { data: days };
  }
}
