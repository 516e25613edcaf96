import { ifMatchHolds, ifNoneMatchHit, strongEtag, wellFormedCondition } from '../common/http';
import type { PlanetWithSatellites } from './celestial-bodies.types';
import { PlanetDto } from './dto/planet.dto';

/**
 * The strong ETag of a planet's representation (GET /planets/{planetId}): the hash of its
 * JSON, so it changes whenever anything a client reads does (its fields, its satellites,
 * whether it has an image, lastUpdated), and only then.
 */
export const planetEtag = (planet: PlanetDto): string => strongEtag(JSON.stringify(planet));

/** The conditional headers of a change to a planet, as sent. */
export interface PlanetConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/**
 * The header whose condition is false for the planet as it is now, or undefined when the
 * change may go ahead. In the order of RFC 9110, section 13.2.2: If-Match first, then
 * If-None-Match, which for a change is false when it is `*` (the planet exists) or lists a
 * tag that matches the planet's weakly (section 13.1.2). A malformed If-None-Match fails, as
 * a malformed If-Match does: the client meant a condition, and the change must not go ahead
 * unconditionally.
 */
export function failedCondition(
  { ifMatch, ifNoneMatch }: PlanetConditions,
  planet: PlanetWithSatellites,
): 'If-Match' | 'If-None-Match' | undefined {
  const etag = planetEtag(PlanetDto.from(planet));
  if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) return 'If-Match';
  if (ifNoneMatch !== undefined && !wellFormedCondition(ifNoneMatch)) return 'If-None-Match';
  if (ifNoneMatchHit(ifNoneMatch, etag) !== undefined) return 'If-None-Match';
  return undefined;
}
