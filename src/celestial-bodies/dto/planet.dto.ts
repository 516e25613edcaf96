import { ApiProperty, ApiSchema } from '@nestjs/swagger';

import { ApiDateTime, ApiFloat, ApiInt64 } from '../../common/swagger';
import { UserDto } from '../../users';
import type { PlanetWithSatellites } from '../celestial-bodies.types';
import type { PlanetType } from '../celestial-body-types';
import { ApiPlanetType } from './body-types';
import { AtmosphereComponentDto, PhysicalPropertiesDto, type TemperatureDto } from './planet-properties.dto';
import { present, SatelliteDto } from './satellite.dto';

/** Where a planet is served (GET, public). */
export const planetPath = (planetId: number): string => `/planets/${planetId}`;

/** Where a planet's image is served (GET, public). Relative, so it holds behind any host or proxy. */
export const planetImagePath = (planetId: number): string => `${planetPath(planetId)}/image`;

/** The Galaxy `Planet`. Optional fields that were never set are left out. */
@ApiSchema({ name: 'Planet' })
export class PlanetDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true })
  id: number;

  /** @example Mars */
  name: string;

  /** @example 'The red planet' */
  description: string | null;

  /** @example terrestrial */
  @ApiPlanetType()
  type?: PlanetType;

  /** @example 0.68 */
  @ApiFloat({ minimum: 0, maximum: 1 })
  habitabilityIndex?: number;

  physicalProperties?: PhysicalPropertiesDto;

  /** Atmospheric composition */
  atmosphere: AtmosphereComponentDto[];

  /** @example 1610-01-07T00:00:00.000Z */
  @ApiDateTime()
  discoveredAt?: string;

  /**
   * Where the uploaded image is served (POST /planets/{planetId}/image sets it); null without one.
   * @example /planets/1/image
   */
  @ApiProperty({ type: 'string', readOnly: true })
  image: string | null;

  /** Its satellites, oldest first (add them with POST /celestial-bodies). */
  @ApiProperty({ type: () => [SatelliteDto], readOnly: true })
  satellites: SatelliteDto[];

  /** The user who created the planet; only they may change it. */
  @ApiProperty({ type: () => UserDto, readOnly: true })
  creator: UserDto;

  /** @example ['solar-system', 'rocky', 'explored'] */
  tags: string[];

  /** @example 2024-01-15T14:30:00.000Z */
  @ApiDateTime({ readOnly: true })
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
export class PlanetBodyDto extends PlanetDto {
  // Required here; said by the decorator, as a redeclared field's plugin reading gives way to
  // what the parent class declares.
  @ApiPlanetType({ required: true })
  declare type: PlanetType;
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
