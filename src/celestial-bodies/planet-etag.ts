import { type ChangeConditions, type EntityTags, failedChangeCondition, strongEtag } from '../common/http';
import { PlanetPreconditionFailedError } from './celestial-bodies.errors';
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

const SAMPLE_ETAG = '"037c9214eef74cc3887f3a4f085b4e17d76280dafd273b0ee160c09c4ba1cfd4"';

/** What the document says of a planet's versions (see @ConditionalGet, @ConditionalChange). */
export const PLANET_TAGS: EntityTags = {
  resource: 'planet',
  etag: {
    description:
      'Strong entity tag of this representation of the planet (with "-gzip" or "-br" appended inside the quotes when compressed).',
    example: SAMPLE_ETAG,
  },
  changeHeaders: [
    {
      name: 'If-Match',
      required: false,
      description:
        'Optional. The ETag from your last GET (or PUT): the change is made only if the planet is still as you read it, else 412 ' +
        '(a weak tag never matches). `*`: only if the planet exists. A malformed value is a 400. Without it the change is unconditional.',
      schema: { type: 'string', example: SAMPLE_ETAG },
    },
    {
      name: 'If-None-Match',
      required: false,
      description:
        "Optional. `*`: 412 because the planet exists; ETags (compared weakly): 412 if one is the planet's current ETag. " +
        'Checked after If-Match; a malformed value is a 400; on a planet that does not exist the answer stays 404.',
      schema: { type: 'string', example: '*' },
    },
  ],
  preconditionFailed: {
    examples: [() => new PlanetPreconditionFailedError(14, 'If-Match')],
    description:
      'Precondition failed: the planet has changed since the version named in If-Match (another client changed it; GET it again), ' +
      'If-Match named a weak tag (never a match), or If-None-Match is `*` or names its current ETag. Nothing was changed.',
  },
};
