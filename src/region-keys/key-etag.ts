import {
  type ChangeConditions,
  type EntityTags,
  failedChangeCondition,
  ifMatchOnChange,
  ifNoneMatchOnChange,
  strongEtag,
} from '../common/http';
import { ApiKeyDto } from './dto/api-key.dto';
import { ApiKeyChangedError } from './region-keys.errors';
import type { ApiKeyRecord } from './region-keys.repository';

/**
 * The strong ETag of a key (GET and PATCH /auth/region/api-keys/{id}): the hash of its
 * representation without `lastUsedAt`. That field moves by itself, about once a minute while
 * the key is in use, and says nothing a change could lose: were it in the tag, an If-Match
 * sent with the key it names would fail after every minute of use, the calling key's own
 * first of all. So the tag changes whenever anything a change sets (or a roll or an expiry
 * time) changes, and only then; a 304 says the same.
 */
export function keyEtag(key: ApiKeyRecord): string {
  const { lastUsedAt: _lastUsedAt, ...version } = ApiKeyDto.from(key);
  return strongEtag(JSON.stringify(version));
}

/** The conditional headers of a change to a key, as sent. */
export type KeyConditions = ChangeConditions;

/** The header whose condition is false for the key as it is now (see failedChangeCondition). */
export const failedKeyCondition = (conditions: KeyConditions, key: ApiKeyRecord) =>
  failedChangeCondition(conditions, () => keyEtag(key));

/** What the document says of a key's versions (see @ConditionalGet, @ConditionalChange). */
export const KEY_TAGS: EntityTags = {
  resource: 'key',
  etag: {
    description:
      "Strong entity tag of the key's version: it changes whenever any field but `lastUsedAt` does (that one moves " +
      'by itself while the key is in use, and a change cannot lose it). Send it in If-Match with a PATCH or DELETE.',
    example: '"9c1185a5c5e9fc54612808977ee8f548b2258d31b3f3c3a0ac2f3f1c6f2e4b1d"',
  },
  changeHeaders: [ifNoneMatchOnChange('key'), ifMatchOnChange('key', 'PATCH')],
  preconditionFailed: { examples: [() => new ApiKeyChangedError('If-Match')] },
};
