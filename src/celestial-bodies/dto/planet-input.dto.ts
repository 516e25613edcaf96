import { ApiHideProperty, ApiProperty, ApiSchema, OmitType } from '@nestjs/swagger';
import { Transform, Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayUnique,
  IsArray,
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

import { ApiDateTime, ApiFloat, ApiInt64 } from '../../common/swagger';
import { FINITE, IsDateTime, IsOmittable, IsPlainText, trim, trimEach } from '../../common/validation';
import type { PlanetValues } from '../celestial-bodies.repository';
import { MAX_SATELLITES_PER_PLANET, PLANET_TYPES, type PlanetType } from '../celestial-body-types';
import { ApiPlanetType } from './body-types';
import { IGNORED, IgnoredSatelliteDto, IgnoredUserDto, NO_CALLBACKS, Unsupported } from './galaxy-fields';
import { AtmosphereComponentDto, PhysicalPropertiesDto, physicalPropertiesInput } from './planet-properties.dto';

/**
 * The body of POST and PUT /planets: the Galaxy's Planet. Its server-owned parts (`id`,
 * `lastUpdated`, `creator`, `satellites`, which POST /celestial-bodies adds, and `image`,
 * which the upload sets) are accepted and ignored, except that on PUT an `id` must be the
 * path's (the service checks it). The Galaxy's callback URLs are refused, saying why. PUT
 * replaces: what it leaves out is cleared. Leaving a field out is the one way to say "none":
 * null is refused wherever the schema does not declare it, so schema and behaviour agree.
 */
@ApiSchema({ name: 'PlanetInput' })
export class PlanetInputDto {
  /** @example Mars */
  @Transform(trim)
  @IsString()
  @Length(1, 100)
  @IsPlainText({ description: 'Trimmed.' })
  name: string;

  /** @example 'The red planet' */
  @IsOptional()
  @IsString()
  @MaxLength(2000)
  @IsPlainText()
  description?: string | null;

  /** @example terrestrial */
  @ApiPlanetType()
  @IsOmittable()
  @IsIn(PLANET_TYPES)
  type?: PlanetType;

  /**
   * A score from 0 to 1 indicating potential habitability
   * @example 0.68
   */
  @ApiFloat()
  @IsOmittable()
  @IsNumber(FINITE)
  @Min(0)
  @Max(1)
  habitabilityIndex?: number;

  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => PhysicalPropertiesDto)
  @Transform(physicalPropertiesInput, { toClassOnly: true })
  physicalProperties?: PhysicalPropertiesDto;

  /** Atmospheric composition */
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(50)
  // Without it an element that is itself an array passes ValidateNested and is stored as {}.
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => AtmosphereComponentDto)
  atmosphere?: AtmosphereComponentDto[];

  /** @example 1610-01-07T00:00:00Z */
  @ApiDateTime()
  @IsOmittable()
  @IsDateTime()
  discoveredAt?: string;

  /** @example ['solar-system', 'rocky', 'explored'] */
  @Transform(trimEach)
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(20)
  @ArrayUnique()
  @IsString({ each: true })
  @Length(1, 50, { each: true })
  @IsPlainText({ each: true, description: 'Each trimmed, 1 to 50 characters, no duplicates.' })
  tags?: string[];

  /** @example 1 */
  @ApiInt64({
    readOnly: true,
    description: `${IGNORED} On PUT, when sent, it must be the planetId of the path (else 400).`,
  })
  @IsOmittable()
  @IsInt()
  id?: number;

  @ApiDateTime({ readOnly: true, description: IGNORED })
  @IsOmittable()
  @IsDateTime()
  lastUpdated?: string;

  @ApiProperty({ readOnly: true, description: IGNORED })
  @IsOmittable()
  @IsObject()
  @ValidateNested()
  @Type(() => IgnoredUserDto)
  creator?: IgnoredUserDto;

  @ApiProperty({
    type: [IgnoredSatelliteDto],
    maxItems: MAX_SATELLITES_PER_PLANET,
    readOnly: true,
    description: `${IGNORED} Its items are checked as satellites, then ignored: add satellites with POST /celestial-bodies.`,
  })
  @IsOmittable()
  @IsArray()
  @ArrayMaxSize(MAX_SATELLITES_PER_PLANET)
  // As for atmosphere: without it an element that is itself an array passes ValidateNested.
  @IsObject({ each: true })
  @ValidateNested({ each: true })
  @Type(() => IgnoredSatelliteDto)
  satellites?: IgnoredSatelliteDto[];

  @ApiProperty({ type: 'string', readOnly: true, description: IGNORED })
  @IsOptional()
  @IsString()
  image?: string | null;

  @ApiHideProperty()
  @Unsupported(NO_CALLBACKS)
  successCallbackUrl?: unknown;

  @ApiHideProperty()
  @Unsupported(NO_CALLBACKS)
  failureCallbackUrl?: unknown;
}

/** A planet sent to POST /celestial-bodies: there `type` is required, as it picks the kind of body. */
@ApiSchema({ name: 'PlanetBodyInput' })
export class PlanetBodyInputDto extends OmitType(PlanetInputDto, ['type'] as const) {
  /** @example terrestrial */
  @ApiPlanetType()
  @IsIn(PLANET_TYPES)
  type: PlanetType;
}

/** What a planet body sets, as columns: everything it leaves out is cleared (PUT replaces). */
export function toPlanetValues(input: PlanetInputDto | PlanetBodyInputDto): PlanetValues {
  const physical = input.physicalProperties;
  return {
    name: input.name,
    description: input.description ?? null,
    type: input.type ?? null,
    habitabilityIndex: input.habitabilityIndex ?? null,
    mass: physical?.mass ?? null,
    radius: physical?.radius ?? null,
    gravity: physical?.gravity ?? null,
    temperatureMin: physical?.temperature?.min ?? null,
    temperatureMax: physical?.temperature?.max ?? null,
    temperatureAverage: physical?.temperature?.average ?? null,
    extraMeasurements: physical?.extra ?? {},
    atmosphere: (input.atmosphere ?? []).map(({ compound, percentage }) => ({ compound, percentage })),
    discoveredAt: input.discoveredAt ? new Date(input.discoveredAt) : null,
    tags: input.tags ?? [],
  };
}
