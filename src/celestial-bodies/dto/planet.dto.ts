import { ApiProperty, ApiPropertyOptional, ApiSchema, OmitType } from '@nestjs/swagger';

import { UserDto } from '../../users';
import type { PlanetWithSatellites } from '../celestial-bodies.types';
import { PLANET_TYPES, type PlanetType } from '../celestial-body-types';
import { AtmosphereComponentDto, PhysicalPropertiesDto, type TemperatureDto } from './planet-properties.dto';
import { present, SatelliteDto } from './satellite.dto';

/** Where a planet is served (GET, public). */
export const planetPath = (planetId: number): string => `/planets/${planetId}`;

/** Where a planet's image is served (GET, public). Relative, so it holds behind any host or proxy. */
export const planetImagePath = (planetId: number): string => `${planetPath(planetId)}/image`;

/** The Galaxy `Planet`. Optional fields that were never set are left out. */
@ApiSchema({ name: 'Planet' })
export class PlanetDto {
  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, example: 1 })
  id: number;

  @ApiProperty({ example: 'Mars' })
  name: string;

  @ApiProperty({ type: 'string', nullable: true, example: 'The red planet' })
  description: string | null;

  @ApiPropertyOptional({ enum: PLANET_TYPES, enumName: 'PlanetType', example: 'terrestrial' })
  type?: PlanetType;

  @ApiPropertyOptional({ type: 'number', format: 'float', minimum: 0, maximum: 1, example: 0.68 })
  habitabilityIndex?: number;

  @ApiPropertyOptional({ type: () => PhysicalPropertiesDto })
  physicalProperties?: PhysicalPropertiesDto;

  @ApiProperty({ type: () => [AtmosphereComponentDto], description: 'Atmospheric composition' })
  atmosphere: AtmosphereComponentDto[];

  @ApiPropertyOptional({ type: 'string', format: 'date-time', example: '1610-01-07T00:00:00.000Z' })
  discoveredAt?: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    readOnly: true,
    description: 'Where the uploaded image is served (POST /planets/{planetId}/image sets it); null without one.',
    example: '/planets/1/image',
  })
  image: string | null;

  @ApiProperty({
    type: () => [SatelliteDto],
    readOnly: true,
    description: 'Its satellites, oldest first (add them with POST /celestial-bodies).',
  })
  satellites: SatelliteDto[];

  @ApiProperty({
    type: () => UserDto,
    readOnly: true,
    description: 'The user who created the planet; only they may change it.',
  })
  creator: UserDto;

  @ApiProperty({ type: 'string', isArray: true, example: ['solar-system', 'rocky', 'explored'] })
  tags: string[];

  @ApiProperty({ type: 'string', format: 'date-time', readOnly: true, example: '2024-01-15T14:30:00.000Z' })
  lastUpdated: string;

  static from({ planet, satellites, creator }: PlanetWithSatellites): PlanetDto {
    const ref = { id: planet.id, name: planet.name };
    return {
      id: planet.id,
      name: planet.name,
      description: planet.description,
      ...present('type', planet.type),
      ...present('habitabilityIndex', planet.habitabilityIndex),
      ...present('physicalProperties', physicalPropertiesOf(planet)),
      atmosphere: planet.atmosphere.map(({ compound, percentage }) => ({ compound, percentage })),
      ...present('discoveredAt', planet.discoveredAt?.toISOString()),
      image: planet.hasImage ? planetImagePath(planet.id) : null,
      satellites: satellites.map((s) => SatelliteDto.from(s, ref)),
      creator: UserDto.from(creator),
      tags: planet.tags,
      lastUpdated: planet.updatedAt.toISOString(),
    };
  }
}

/**
 * A planet as POST /celestial-bodies answers it: made with a `type`, so it always has one.
 * Its own schema, so that the answer's discriminator does not make `type` required on every
 * Planet (GET /planets lists planets made without one).
 */
@ApiSchema({ name: 'PlanetBody' })
export class PlanetBodyDto extends OmitType(PlanetDto, ['type'] as const) {
  @ApiProperty({ enum: PLANET_TYPES, enumName: 'PlanetType', example: 'terrestrial' })
  type: PlanetType;
}

function physicalPropertiesOf(planet: PlanetWithSatellites['planet']): PhysicalPropertiesDto | null {
  const temperature: TemperatureDto = {
    ...present('min', planet.temperatureMin),
    ...present('max', planet.temperatureMax),
    ...present('average', planet.temperatureAverage),
  };
  // Further measurements are fields of their own, as the Galaxy has them; the named ones follow.
  const properties: PhysicalPropertiesDto = {
    ...planet.extraMeasurements,
    ...present('mass', planet.mass),
    ...present('radius', planet.radius),
    ...present('gravity', planet.gravity),
    ...(Object.keys(temperature).length > 0 ? { temperature } : {}),
  };
  return Object.keys(properties).length > 0 ? properties : null;
}
