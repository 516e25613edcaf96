import { ApiProperty, ApiSchema, OmitType, PartialType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  IsDefined,
  IsIn,
  IsInt,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  Length,
  Max,
  MaxLength,
  Min,
  ValidateNested,
} from 'class-validator';

import { ApiFloat, ApiInt64, ApiInteger, IsPositiveNumber } from '../../common/swagger';
import { FINITE, IsOmittable, IsPlainText, trim } from '../../common/validation';
import { INT4_MAX } from '../../database';
import { SATELLITE_TYPES, type SatelliteType } from '../celestial-body-types';
import { ApiSatelliteType } from './body-types';
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
  /**
   * The planet this body orbits; it must exist. Any other field of the planet is ignored.
   * @example 1
   */
  // The plugin reads a validator's bound only when it is written as a number.
  @ApiInteger({ maximum: INT4_MAX })
  @IsDefined({ message: MUST_ORBIT })
  @IsInt()
  @Min(1)
  @Max(INT4_MAX)
  id: number;
}

@ApiSchema({ name: 'OrbitInput' })
export class OrbitInputDto {
  /** The planet this body orbits; it must exist. */
  @IsDefined({ message: MUST_ORBIT })
  @IsObject()
  @ValidateNested()
  @Type(() => OrbitPlanetInputDto)
  planet: OrbitPlanetInputDto;

  /**
   * Orbital period in Earth days
   * @example 0.319
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositiveNumber()
  orbitalPeriod?: number;

  /**
   * Average distance from the planet in kilometers
   * @example 9376
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositiveNumber()
  distance?: number;
}

/**
 * A satellite sent to POST /celestial-bodies (`type` moon, asteroid or comet). Unlike the
 * Galaxy, `orbit` is required (MUST_ORBIT); a sent `id` is ignored.
 */
@ApiSchema({ name: 'SatelliteInput' })
export class SatelliteInputDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true, description: IGNORED })
  @IsOmittable()
  @IsInt()
  id?: number;

  /** @example Phobos */
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText({ description: 'Trimmed.' })
  name: string;

  /** @example 'Phobos is the larger and innermost of the two moons of Mars.' */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @IsPlainText()
  description?: string | null;

  /**
   * Diameter in kilometers
   * @example 22.2
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @IsPositiveNumber()
  diameter?: number;

  /** @example moon */
  @ApiSatelliteType()
  @IsIn(SATELLITE_TYPES)
  type: SatelliteType;

  @ApiProperty({ description: `Required: ${MUST_ORBIT}.` })
  @IsDefined({ message: MUST_ORBIT })
  @IsObject()
  @ValidateNested()
  @Type(() => OrbitInputDto)
  orbit: OrbitInputDto;
}
