import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { MAX_ID } from '../celestial-body-types';
import { PlanetDto } from './planet.dto';

// Query strings are text: whole numbers (with an optional minus, so that -1 is reported as
// too small rather than as "not a number") become numbers; anything else stays text and
// fails @IsInt.
const toInt = ({ value }: { value: unknown }) => (typeof value === 'string' && /^-?\d{1,16}$/.test(value) ? Number(value) : value);

export const DEFAULT_PAGE_SIZE = 10;
export const MAX_PAGE_SIZE = 100;

export class ListPlanetsQueryDto {
  @ApiProperty({ required: false, type: 'integer', minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE, description: 'The number of items to return' })
  @Transform(toInt)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE_SIZE)
  limit: number = DEFAULT_PAGE_SIZE;

  @ApiProperty({ required: false, type: 'integer', minimum: 0, maximum: MAX_ID, default: 0, description: 'The number of items to skip before starting to collect the result set' })
  @Transform(toInt)
  @IsInt()
  @Min(0)
  @Max(MAX_ID)
  offset: number = 0;
}

@ApiSchema({ name: 'PageMeta' })
export class PageMetaDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 10 })
  limit: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 0 })
  offset: number;

  @ApiProperty({ type: 'integer', format: 'int64', example: 100 })
  total: number;

  @ApiProperty({
    type: 'string',
    nullable: true,
    description: 'The path of the next page; null on the last page.',
    example: '/planets?limit=10&offset=10',
  })
  next: string | null;
}

/** The Galaxy `PaginatedResource` of planets. */
@ApiSchema({ name: 'PaginatedPlanets' })
export class PlanetPageDto {
  @ApiProperty({ type: () => [PlanetDto] })
  data: PlanetDto[];

  @ApiProperty({ type: () => PageMetaDto })
  meta: PageMetaDto;
}
