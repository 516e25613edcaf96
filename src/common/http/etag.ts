import { createHash } from 'node:crypto';

/** A strong entity tag: the quoted SHA-256 (hex) of what it tags. */
export function strongEtag(content: string | Buffer): string {
  return etagOfHash(createHash('sha256').update(content).digest('hex'));
}

export const etagOfHash = (sha256Hex: string): string => `"${sha256Hex}"`;

/**
 * The content codings that change a response's bytes (see compression.ts). A compressed
 * response carries its representation's tag with the coding appended inside the quotes
 * ("abc" becomes "abc-gzip"): each encoding is a representation of its own, so a strong tag
 * must differ between them (RFC 9110, section 8.8.1).
 */
export const CONTENT_CODINGS = ['br', 'gzip'] as const;

/** The tag of the representation sent with `coding`; weak tags, and the identity coding's, stay as they are. */
export function etagForCoding(etag: string, coding: string): string {
  return etag.startsWith('"') && coding !== 'identity' ? `${etag.slice(0, -1)}-${coding}"` : etag;
}

export interface EntityTag {
  weak: boolean;
  /** As sent, for an answer that repeats it. */
  text: string;
  /** The opaque tag between the quotes, any content-coding suffix taken off. */
  opaque: string;
}

const TAG = String.raw`(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"`;
const ENTITY_TAG = new RegExp(TAG, 'g');
/** 1#entity-tag (RFC 9110, sections 5.6.1 and 8.8.3): tags separated by commas, empty list elements allowed. */
const TAG_LIST = new RegExp(String.raw`^[\t ,]*${TAG}(?:[\t ]*,[\t ,]*${TAG})*[\t ,]*$`);

/**
 * An If-Match or If-None-Match value by RFC 9110's grammar (sections 13.1.1 and 13.1.2):
 * `*` alone, or a comma-separated list of at least one entity tag. Undefined for anything
 * else (a stray word, `*` in a list, parameters, an empty value): such a value is refused
 * (400, see conditional-request.ts), never searched for a tag it happens to contain.
 */
export function parseCondition(header: string): '*' | EntityTag[] | undefined {
  if (header.trim() === '*') return '*';
  if (!TAG_LIST.test(header)) return undefined;
  return [...header.matchAll(ENTITY_TAG)].map(([text, weak, opaque]) => ({
    weak: weak !== undefined,
    text,
    opaque: withoutCoding(opaque),
  }));
}

function withoutCoding(opaque: string): string {
  for (const coding of CONTENT_CODINGS) if (opaque.endsWith(`-${coding}`)) return opaque.slice(0, -coding.length - 1);
  return opaque;
}

const opaqueOf = (etag: string): string => etag.replace(/^W\//, '').slice(1, -1);

/** Whether If-None-Match is `*` or lists a tag that `matches` (a malformed value never does). */
function ifNoneMatchLists(header: string | undefined, matches: (tag: EntityTag) => boolean): boolean {
  if (header === undefined) return false;
  const condition = parseCondition(header);
  return condition === '*' || (condition?.some(matches) ?? false);
}

/**
 * If-None-Match on a read (RFC 9110, section 13.1.2): true when it is `*` or lists, compared
 * weakly, the tag of the representation this request would get (`etag`, coded as its 200
 * would be). A tag of another coding names another representation, which a cache holding it
 * could not update from this one's 304 (RFC 9111, section 4.3.4): that request gets the 200.
 */
export const ifNoneMatchHit = (header: string | undefined, etag: string): boolean =>
  ifNoneMatchLists(header, (tag) => opaqueOf(tag.text) === opaqueOf(etag));

/** Why If-Match is false: the tags it names are not current, or it names weak ones, which never match. */
export type IfMatchFailure = 'If-Match' | 'weak If-Match';

/**
 * If-Match (RFC 9110, section 13.1.1): `*` holds for any current representation; otherwise
 * one of the listed tags must match strongly (a weak tag never does). A tag of the same
 * representation in another content coding matches: it names the same state. Undefined when
 * it holds; 'weak If-Match' when it fails and lists a weak tag, for an answer that says so.
 */
export function ifMatchFailure(header: string, etag: string): IfMatchFailure | undefined {
  const condition = parseCondition(header);
  if (condition === '*') return undefined;
  const current = opaqueOf(etag);
  const holds = !etag.startsWith('W/') && condition?.some((tag) => !tag.weak && tag.opaque === current);
  if (holds) return undefined;
  return condition?.some((tag) => tag.weak) ? 'weak If-Match' : 'If-Match';
}

export const ifMatchHolds = (header: string, etag: string): boolean => ifMatchFailure(header, etag) === undefined;

/** The conditional headers of a change (PUT, PATCH, DELETE), as sent. */
export interface ChangeConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/** The condition that is false for a change: see failedChangeCondition. */
export type FailedCondition = IfMatchFailure | 'If-None-Match';

/**
 * The condition that is false for the resource as it is now (its ETag made by `currentEtag`,
 * only when a condition was sent), or undefined when the change may go ahead. In the order of
 * RFC 9110, section 13.2.2: If-Match first, then If-None-Match, which for a change is false
 * when it is `*` (the resource exists) or lists a tag that matches weakly (section 13.1.2).
 * Malformed values are refused before (@Conditions()); here one would fail If-Match and pass
 * If-None-Match.
 */
export function failedChangeCondition(
  { ifMatch, ifNoneMatch }: ChangeConditions,
  currentEtag: () => string,
): FailedCondition | undefined {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const etag = currentEtag();
  const ifMatchFailed = ifMatch === undefined ? undefined : ifMatchFailure(ifMatch, etag);
  if (ifMatchFailed) return ifMatchFailed;
  // A change replaces the state, whichever coding the client read it in.
  if (ifNoneMatchLists(ifNoneMatch, (tag) => tag.opaque === opaqueOf(etag))) return 'If-None-Match';
  return undefined;
}
