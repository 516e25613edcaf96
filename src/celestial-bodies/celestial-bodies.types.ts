import type { UserProfile } from '../users';
import type { PlanetRecord, SatelliteRecord } from './celestial-bodies.repository';
import type { Planet } from './entities/planet.entity';
import type { Satellite } from './entities/satellite.entity';

/*
 * What the service answers with: the controller's DTOs are made from these, so they live
 * beside the service rather than in it (dto/ does not import the service).
 */

export interface PlanetWithSatellites {
  planet: PlanetRecord;
  satellites: SatelliteRecord[];
  creator: UserProfile;
}

export interface PlanetPage {
  items: PlanetWithSatellites[];
  total: number;
}

export interface SatelliteWithPlanet {
  satellite: Satellite;
  planet: Pick<Planet, 'id' | 'name'>;
}
