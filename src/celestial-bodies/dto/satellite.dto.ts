import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';

import type { SatelliteRecord } from '../celestial-bodies.repository';
import { SATELLITE_TYPES, type SatelliteType } from '../celestial-body-types';

/**
 * The planet a satellite orbits, by id and name. (The Galaxy puts a whole Planet here; with
 * only its two required fields it still is one, and a planet's satellites do not repeat it.)
 */
@ApiSchema({ name: 'PlanetRef' })
export class PlanetRefDto {
  @ApiProperty({ type: 'integer', format: 'int64', example: 1 })
  id: number;

  @ApiProperty({ example: 'Mars' })
  name: string;
}

@ApiSchema({ name: 'Orbit' })
export class OrbitDto {
  @ApiProperty({ type: () => PlanetRefDto })
  planet: PlanetRefDto;

  @ApiPropertyOptional({ type: 'number', format: 'float', description: 'Orbital period in Earth days', example: 0.319 })
  orbitalPeriod?: number;

  @ApiPropertyOptional({
    type: 'number',
    format: 'float',
    description: 'Average distance from the planet in kilometers',
    example: 9376,
  })
  distance?: number;
}

/** The Galaxy `Satellite`. Optional fields that were never set are left out. */
@ApiSchema({ name: 'Satellite' })
export class SatelliteDto {
  @ApiProperty({ type: 'integer', format: 'int64', readOnly: true, example: 1 })
  id: number;

  @ApiProperty({ example: 'Phobos' })
  name: string;

  @ApiProperty({
    type: 'string',
    nullable: true,
    example: 'Phobos is the larger and innermost of the two moons of Mars.',
  })
  description: string | null;

  @ApiPropertyOptional({ type: 'number', format: 'float', description: 'Diameter in kilometers', example: 22.2 })
  diameter?: number;

  @ApiProperty({ enum: SATELLITE_TYPES, enumName: 'SatelliteType', example: 'moon' })
  type: SatelliteType;

  @ApiProperty({ type: () => OrbitDto })
  orbit: OrbitDto;

  static from(satellite: SatelliteRecord, planet: PlanetRefDto): SatelliteDto {
    return {
      id: satellite.id,
      name: satellite.name,
      description: satellite.description,
      ...present('diameter', satellite.diameter),
      type: satellite.type,
      orbit: {
        planet: { id: planet.id, name: planet.name },
        ...present('orbitalPeriod', satellite.orbitalPeriod),
        ...present('distance', satellite.distance),
      },
    };
  }
}

/** `{ [key]: value }`, or nothing when the value is null: the Galaxy's optional fields are not nullable. */
export function present<K extends string, V>(key: K, value: V | null | undefined): { [P in K]?: V } {
  return value === null || value === undefined ? {} : ({ [key]: value } as { [P in K]: V });
}
