import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';

import proxyAddr from '@fastify/proxy-addr';

import type { TrustProxySetting } from '../../config/app-config';

/** The longest textual IP address (IPv4-mapped IPv6, written out in full). */
export const MAX_ADDRESS_LENGTH = 45;

type TrustFunction = (address: string, hop: number) => boolean;

/**
 * What Fastify's `trustProxy` gets for the setting. A hop count is given as a function:
 * Fastify itself now treats a bare number as "trust nobody", and proxy-addr walks
 * X-Forwarded-For right to left, calling this with each peer's position.
 */
export function trustProxyOption(setting: TrustProxySetting): false | TrustFunction {
  if (setting === false) return false;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyAddr.compile(setting);
}

/** A forwarded entry that is one plain IP address (no port, no zone, no name, nothing else). */
function isPlainAddress(entry: string): boolean {
  return entry.length <= MAX_ADDRESS_LENGTH && isIP(entry) !== 0 && !entry.includes('%');
}

/**
 * Keeps only the part of X-Forwarded-For that can be read: the entries to the right of the
 * rightmost malformed one. proxy-addr reads the header right to left and stops at the first
 * address it does not trust; a malformed entry would otherwise become the client's
 * "address" (in rate-limit keys, logs and the audit trail). Entries left of it were written
 * by whoever wrote it, so they are dropped too, and the last trusted hop is the client.
 *
 * Rewriting the header is the one place this can happen: Fastify computes `request.ip`
 * lazily from the raw header each time it is read, and takes no validation hook.
 */
export function dropUnreadableForwardedFor(raw: IncomingMessage): void {
  const header = raw.headers['x-forwarded-for'];
  if (header === undefined) return;
  const entries = (Array.isArray(header) ? header.join(',') : header).split(',').map((entry) => entry.trim());
  let first = entries.length;
  while (first > 0 && isPlainAddress(entries[first - 1])) first--;
  if (first === 0) return;
  if (first === entries.length) delete raw.headers['x-forwarded-for'];
  else raw.headers['x-forwarded-for'] = entries.slice(first).join(', ');
}
