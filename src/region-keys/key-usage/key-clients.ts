import { isIPv4 } from 'node:net';

import { parseIpAddress, unmapped } from '../../common/http';

/** The longest user agent kept, in characters; the rest is cut. */
export const MAX_USER_AGENT_LENGTH = 200;

/** One client (address and user agent) of a key, as counted in memory and stored. */
export interface ClientCount {
  apiKeyId: string;
  address: string;
  /** '' when the client sent none. */
  userAgent: string;
  firstSeenAt: number;
  lastSeenAt: number;
  requests: number;
}

/** The key of a client's (address, user agent) pair: an address holds no newline, so it is unambiguous. */
export const clientPair = (client: Pick<ClientCount, 'address' | 'userAgent'>): string =>
  `${client.address}\n${client.userAgent}`;

/** Adds `more`, the same pair counted elsewhere (another flush, or the database), into `into`. */
export function addClientCounts(into: ClientCount, more: ClientCount): void {
  into.requests += more.requests;
  into.firstSeenAt = Math.min(into.firstSeenAt, more.firstSeenAt);
  into.lastSeenAt = Math.max(into.lastSeenAt, more.lastSeenAt);
}

// Control characters (C0, DEL, C1) could rewrite an operator's terminal, and PostgreSQL
// refuses NUL: each is shown as U+FFFD instead.
const CONTROL = /\p{Cc}/u;
const CONTROLS = /\p{Cc}/gu;

/**
 * A user agent header as stored: control characters replaced, cut at 200 characters (not in
 * the middle of one), '' when absent. Runs per request: long and clean headers cost one test.
 */
export function userAgentOf(header: string | string[] | undefined): string {
  const value = typeof header === 'string' ? header : (header?.[0] ?? '');
  // 200 characters are at most 400 UTF-16 units: a huge header is never copied whole.
  let cut = value.length > MAX_USER_AGENT_LENGTH ? value.slice(0, 2 * MAX_USER_AGENT_LENGTH) : value;
  if (cut.length > MAX_USER_AGENT_LENGTH) cut = Array.from(cut).slice(0, MAX_USER_AGENT_LENGTH).join('');
  return CONTROL.test(cut) ? cut.replace(CONTROLS, '\uFFFD') : cut;
}

/**
 * A client address as stored, one spelling per address: an IPv4 client seen as IPv4-mapped IPv6
 * (`::ffff:192.0.2.1`, how a dual-stack socket shows it) is its IPv4 address, and IPv6 is in
 * canonical form, so one client never makes two rows. Runs per request: IPv4 costs one test.
 */
export function clientAddressOf(ip: string): string {
  if (isIPv4(ip)) return ip;
  const parsed = parseIpAddress(ip);
  return (parsed === null ? ip : unmapped(parsed).toString()).slice(0, 64);
}
