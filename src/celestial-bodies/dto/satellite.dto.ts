import { ApiSchema } from '@nestjs/swagger';

import { ApiFloat, ApiInt64 } from '../../common/swagger';
import type { SatelliteRecord } from '../celestial-bodies.repository';
import type { SatelliteType } from '../celestial-body-types';
import { ApiSatelliteType } from './body-types';

/**
 * The planet a satellite orbits, by id and name. (The Galaxy puts a whole Planet here; with
 * only its two required fields it still is one, and a planet's satellites do not repeat it.)
 */
@ApiSchema({ name: 'PlanetRef' })
export class PlanetRefDto {
  /** @example 1 */
  @ApiInt64()
  id: number;

  /** @example Mars */
  name: string;
}

@ApiSchema({ name: 'Orbit' })
export class OrbitDto {
  planet: PlanetRefDto;

  /**
   * Orbital period in Earth days
   * @example 0.319
   */
  @ApiFloat()
  orbitalPeriod?: number;

  /**
   * Average distance from the planet in kilometers
   * @example 9376
   */
  @ApiFloat()
  distance?: number;
}

/** The Galaxy `Satellite`. Optional fields that were never set are left out. */
@ApiSchema({ name: 'Satellite' })
export class SatelliteDto {
  /** @example 1 */
  @ApiInt64({ readOnly: true })
  id: number;

  /** @example Phobos */
  name: string;

  /** @example 'Phobos is the larger and innermost of the two moons of Mars.' */
  description: string | null;

  /**
   * Diameter in kilometers
   * @example 22.2
   */
  @ApiFloat()
  diameter?: number;

  /** @example moon */
  @ApiSatelliteType()
  type: SatelliteType;

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
