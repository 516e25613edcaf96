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

/** The tag of the representation sent with `coding`; weak tags stay as they are. */
export function etagForCoding(etag: string, coding: string): string {
  return etag.startsWith('"') ? `${etag.slice(0, -1)}-${coding}"` : etag;
}

interface EntityTag {
  weak: boolean;
  /** As sent, for an answer that repeats it. */
  text: string;
  /** The opaque tag between the quotes, any content-coding suffix taken off. */
  opaque: string;
}

const ENTITY_TAG = /(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"/g;

/** The entity tags of an If-Match or If-None-Match value; anything else in it is ignored. */
function parseEntityTags(header: string): EntityTag[] {
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

/**
 * If-None-Match (RFC 9110, section 13.1.2): `*`, or a list of tags compared weakly, in any
 * of the representation's encodings. Returns the tag a 304 should carry (the one the client
 * holds, so that its cache finds the response it stored), or undefined when the condition
 * lets the request through.
 */
export function ifNoneMatchHit(header: string | undefined, etag: string): string | undefined {
  if (header === undefined) return undefined;
  if (header.trim() === '*') return etag;
  const current = opaqueOf(etag);
  return parseEntityTags(header).find((tag) => tag.opaque === current)?.text;
}

const TAG = String.raw`(?:W\/)?"[\x21\x23-\x7e\x80-\xff]*"`;
/** 1#entity-tag (RFC 9110, sections 5.6.1 and 8.8.3), empty list elements allowed. */
const TAG_LIST = new RegExp(String.raw`^[\t ,]*${TAG}(?:[\t ]*,[\t ,]*${TAG})*[\t ,]*$`);

/**
 * Whether an If-Match or If-None-Match value follows the grammar: `*` alone, or a
 * comma-separated list of entity tags. A change fails closed on anything else, since a client
 * that sent a condition meant it to hold (a read may ignore it).
 */
export function wellFormedCondition(header: string): boolean {
  return header.trim() === '*' || TAG_LIST.test(header);
}

/**
 * If-Match (RFC 9110, section 13.1.1): `*` holds for any current representation; otherwise
 * one of the listed tags must match strongly (a weak tag never does). A tag of the same
 * representation in another content coding matches: it names the same state.
 */
export function ifMatchHolds(header: string, etag: string): boolean {
  if (header.trim() === '*') return true;
  if (etag.startsWith('W/')) return false;
  const current = opaqueOf(etag);
  return parseEntityTags(header).some((tag) => !tag.weak && tag.opaque === current);
}

/** The conditional headers of a change (PUT, PATCH, DELETE), as sent. */
export interface ChangeConditions {
  ifMatch?: string;
  ifNoneMatch?: string;
}

/**
 * The header whose condition is false for the resource as it is now (its ETag made by
 * `currentEtag`, only when a condition was sent), or undefined when the change may go
 * ahead. In the order of RFC 9110, section 13.2.2: If-Match first, then If-None-Match, which
 * for a change is false when it is `*` (the resource exists) or lists a tag that matches
 * weakly (section 13.1.2). A malformed value of either fails: the client meant a condition,
 * and the change must not go ahead unconditionally.
 */
export function failedChangeCondition(
  { ifMatch, ifNoneMatch }: ChangeConditions,
  currentEtag: () => string,
): 'If-Match' | 'If-None-Match' | undefined {
  if (ifMatch === undefined && ifNoneMatch === undefined) return undefined;
  const etag = currentEtag();
  if (ifMatch !== undefined && !ifMatchHolds(ifMatch, etag)) return 'If-Match';
  if (ifNoneMatch !== undefined && !wellFormedCondition(ifNoneMatch)) return 'If-None-Match';
  if (ifNoneMatchHit(ifNoneMatch, etag) !== undefined) return 'If-None-Match';
  return undefined;
}
