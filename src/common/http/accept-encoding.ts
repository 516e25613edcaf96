import { CONTENT_CODINGS } from './etag';

export type Coding = (typeof CONTENT_CODINGS)[number];

/** A qvalue (RFC 9110, section 12.4.2): 0 to 1 with at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/;

/**
 * The weight of each coding an Accept-Encoding value names, by lower-case name (x-gzip
 * counts as gzip, RFC 9110 section 8.4.1.3). A weight that is not a qvalue counts as 0, and
 * a coding named twice takes its lower weight: a refusal, however it is written, is kept.
 */
function weights(header: string): Map<string, number> {
  const weight = new Map<string, number>();
  for (const member of header.split(',')) {
    const [name, ...params] = member.split(';').map((part) => part.trim());
    if (name === '') continue;
    const coding = name.toLowerCase() === 'x-gzip' ? 'gzip' : name.toLowerCase();
    // RFC 9110's weight is `q=` and a qvalue, nothing between: `q = 1` or `q=\t1` is not one.
    const q = params.find((param) => /^q=/i.test(param));
    const value = q === undefined ? '1' : q.slice(2);
    const w = QVALUE.test(value) ? Number(value) : 0;
    weight.set(coding, Math.min(w, weight.get(coding) ?? 1));
  }
  return weight;
}

/**
 * The content coding to send for an Accept-Encoding value (RFC 9110, section 12.5.3): of
 * the codings this service has, the one the client weighs highest (br on a tie), counting
 * `*` for a coding it does not name; one with weight 0 is never sent. `identity` when the
 * client accepts none of them, even when it refuses identity too (`identity;q=0`, `*;q=0`):
 * for a field it cannot satisfy a server may disregard the field instead of answering 406
 * (RFC 9110, section 12.1; 415 is about request content), and an uncompressed body is one
 * every client can read. Bodies under the compression threshold go uncompressed likewise.
 */
export function negotiatedCoding(header: string): Coding | 'identity' {
  const weight = weights(header);
  let chosen: Coding | 'identity' = 'identity';
  let best = 0;
  for (const coding of CONTENT_CODINGS) {
    const w = weight.get(coding) ?? weight.get('*') ?? 0;
    if (w > best) [chosen, best] = [coding, w];
  }
  return chosen;
}
