import { isIPv4, isIPv6 } from 'node:net';

import ipaddr from 'ipaddr.js';

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * An address without a zone id, or null when node:net would not take it as one: ipaddr.js also
 * reads `10.1`, `0x7f.0.0.1` and octal parts, which nothing else here accepts. `::a.b.c.d` is
 * the IPv6 address RFC 4291 makes of it (::a.b:c.d); ipaddr.js alone would read it as IPv4-mapped.
 */
export function parseIpAddress(text: string): IpAddress | null {
  if (isIPv4(text)) return ipaddr.IPv4.parse(text);
  if (!isIPv6(text)) return null;
  const spelled = text.startsWith('::') && text.includes('.') ? `0${text}` : text;
  return ipaddr.IPv6.isValid(spelled) && !spelled.includes('%') ? ipaddr.IPv6.parse(spelled) : null;
}

/** IPv4, and IPv4 mapped into IPv6 (`::ffff:a.b.c.d` or `::ffff:xxxx:xxxx`), as IPv4. */
export const unmapped = (address: IpAddress): IpAddress =>
  address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() ? address.toIPv4Address() : address;
