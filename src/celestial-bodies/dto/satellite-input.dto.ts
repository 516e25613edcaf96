import { ApiProperty, ApiPropertyOptional, ApiSchema, OmitType, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsDefined,
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
import { IGNORED } from './galaxy-fields';
import { PlanetInputDto } from './planet-input.dto';

/** Why a satellite without a planet is refused: there is nowhere to keep or list it. */
export const MUST_ORBIT =
  "a satellite here must orbit a planet: send orbit.planet with the id of an existing planet (it is listed in that planet's satellites)";

/**
 * Names an existing planet by its id. A Galaxy client sends a whole `Planet` here: its other
 * fields are validated as a planet's and then ignored (the planet is not changed, and they
 * need not agree with it).
 */
@ApiSchema({ name: 'OrbitPlanetInput' })
export class OrbitPlanetInputDto extends OmitType(PartialType(PlanetInputDto), ['id'] as const) {
  @ApiProperty({
    type: 'integer',
    minimum: 1,
    maximum: INT4_MAX,
    description: 'The planet this body orbits; it must exist. Any other field of the planet is ignored.',
    example: 1,
  })
  @IsDefined({ message: MUST_ORBIT })
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  id: number;
}

@ApiSchema({ name: 'OrbitInput' })
export class OrbitInputDto {
  @ApiProperty({ type: () => OrbitPlanetInputDto, description: 'The planet this body orbits; it must exist.' })
  @IsDefined({ message: MUST_ORBIT })
  @IsObject()
  @ValidateNested()
  @Type(() => OrbitPlanetInputDto)
  planet: OrbitPlanetInputDto;

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

/**
 * A satellite sent to POST /celestial-bodies (`type` moon, asteroid or comet). Unlike the
 * Galaxy, `orbit` is required (MUST_ORBIT); a sent `id` is ignored.
 */
@ApiSchema({ name: 'SatelliteInput' })
export class SatelliteInputDto {
  @ApiPropertyOptional({ type: 'integer', format: 'int64', readOnly: true, description: IGNORED, example: 1 })
  @IsOmittable()
  @IsInt()
  id?: number;

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

  @ApiProperty({ type: () => OrbitInputDto, description: `Required: ${MUST_ORBIT}.` })
  @IsDefined({ message: MUST_ORBIT })
  @IsObject()
  @ValidateNested()
  @Type(() => OrbitInputDto)
  orbit: OrbitInputDto;
}
