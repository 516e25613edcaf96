import { type ChangeConditions, failedChangeCondition, strongEtag } from '../common/http';
import type { PlanetWithSatellites } from './celestial-bodies.types';
import { PlanetDto } from './dto/planet.dto';

/**
 * The strong ETag of a planet's representation (GET /planets/{planetId}): the hash of its
 * JSON, so it changes whenever anything a client reads does (its fields, its satellites,
 * whether it has an image, lastUpdated), and only then.
 */
export const planetEtag = (planet: PlanetDto): string => strongEtag(JSON.stringify(planet));

/** The conditional headers of a change to a planet, as sent. */
export type PlanetConditions = ChangeConditions;

/** The header whose condition is false for the planet as it is now (see failedChangeCondition). */
export const failedCondition = (conditions: PlanetConditions, planet: PlanetWithSatellites) =>
  failedChangeCondition(conditions, () => planetEtag(PlanetDto.from(planet)));
