import ipaddr from 'ipaddr.js';

import { parseIpAddress, unmapped } from '../http/ip-address';

/**
 * What a per-client limit counts by. An IPv6 client usually holds a whole /64 and can
 * change its address within it at will, so IPv6 addresses count by their /64; IPv4, and
 * IPv4 mapped into IPv6, by the address.
 */
export function clientAddressKey(ip: string): string {
  const address = ip.split('%')[0];
  const parsed = parseIpAddress(address);
  if (parsed === null) return address;
  const client = unmapped(parsed);
  if (client instanceof ipaddr.IPv4) return client.toString();
  return `${client.parts
    .slice(0, 4)
    .map((part) => part.toString(16))
    .join(':')}::/64`;
}
