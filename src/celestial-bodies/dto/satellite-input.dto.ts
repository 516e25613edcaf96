import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsPositive,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

import { FINITE, greaterThan, IsOmittable, IsPlainText, PLAIN_TEXT_RULE, trim } from '../../common/validation';
import { INT4_MAX } from '../../database';
import { SATELLITE_TYPES, type SatelliteType } from '../celestial-body-types';

/** Names an existing planet by its id. */
@ApiSchema({ name: 'PlanetIdRef' })
export class PlanetIdRefDto {
  @ApiProperty({ type: 'integer', minimum: 1, maximum: INT4_MAX, example: 1 })
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  id: number;
}

@ApiSchema({ name: 'OrbitInput' })
export class OrbitInputDto {
  @ApiProperty({ type: () => PlanetIdRefDto, description: 'The planet this body orbits; it must exist.' })
  @IsObject()
  @ValidateNested()
  @Type(() => PlanetIdRefDto)
  planet: PlanetIdRefDto;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    ...greaterThan(0),
    description: 'Orbital period in Earth days',
    example: 0.319,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositive()
  orbitalPeriod?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    ...greaterThan(0),
    description: 'Average distance from the planet in kilometers',
    example: 9376,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositive()
  distance?: number;
}

/** A satellite sent to POST /celestial-bodies (`type` moon, asteroid or comet). */
@ApiSchema({ name: 'SatelliteInput' })
export class SatelliteInputDto {
  @ApiProperty({ minLength: 1, maxLength: 100, description: `Trimmed. ${PLAIN_TEXT_RULE}`, example: 'Phobos' })
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText()
  name: string;

  @ApiPropertyOptional({
    type: 'string',
    nullable: true,
    maxLength: 2000,
    description: PLAIN_TEXT_RULE,
    example: 'Phobos is the larger and innermost of the two moons of Mars.',
  })
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @IsPlainText()
  description?: string | null;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    ...greaterThan(0),
    description: 'Diameter in kilometers',
    example: 22.2,
  })
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositive()
  diameter?: number;

  @ApiProperty({ enum: SATELLITE_TYPES, enumName: 'SatelliteType', example: 'moon' })
  @IsIn(SATELLITE_TYPES)
  type: SatelliteType;

  @ApiProperty({ type: () => OrbitInputDto })
  @IsObject()
  @ValidateNested()
  @Type(() => OrbitInputDto)
  orbit: OrbitInputDto;
}
