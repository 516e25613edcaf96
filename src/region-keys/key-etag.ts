import { ifMatchHolds, ifNoneMatchHit, strongEtag, wellFormedCondition } from '../common/http';
import { ApiKeyDto } from './dto/api-key.dto';
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
export interface KeyConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/**
 * The header whose condition is false for the key as it is now, or undefined when the change
 * may go ahead; as for planets (see planet-etag.ts), in the order of RFC 9110, section 13.2.2.
 * If-Match holds for `*` or the key's ETag; If-None-Match fails for `*` (the key exists) or
 * its ETag. A malformed value of either fails: the client meant a condition.
 */
export function failedKeyCondition(
  { ifMatch, ifNoneMatch }: KeyConditions,
  key: ApiKeyRecord,
): 'If-Match' | 'If-None-Match' | undefined {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const etag = keyEtag(key);
  if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) return 'If-Match';
  if (ifNoneMatch !== undefined && !wellFormedCondition(ifNoneMatch)) return 'If-None-Match';
  if (ifNoneMatchHit(ifNoneMatch, etag) !== undefined) return 'If-None-Match';
  return undefined;
}
