import { ifMatchHolds, strongEtag } from '../common/http';
import type { PlanetWithSatellites } from './celestial-bodies.types';
import { PlanetDto } from './dto/planet.dto';

/**
 * The strong ETag of a planet's representation (GET /planets/{planetId}): the hash of its
 * JSON, so it changes whenever anything a client reads does (its fields, its satellites,
 * whether it has an image, lastUpdated), and only then.
 */
export const planetEtag = (planet: PlanetDto): string => strongEtag(JSON.stringify(planet));

/** Whether If-Match holds for the planet as it is now. */
export const planetEtagHolds = (ifMatch: string, planet: PlanetWithSatellites): boolean =>
  ifMatchHolds(ifMatch, planetEtag(PlanetDto.from(planet)));
