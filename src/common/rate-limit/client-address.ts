import { isIPv6 } from 'node:net';

/**
 * What a per-client limit counts by. An IPv6 client usually holds a whole /64 and can
 * change its address within it at will, so IPv6 addresses count by their /64 (as
 * @nestjs/throttler's guard does); IPv4, and IPv4 mapped into IPv6, by the address.
 */
export function clientAddressKey(ip: string): string {
  const address = ip.split('%')[0];
  if (!isIPv6(address)) return address;
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  if (mapped) return mapped[1];
  const [head, tail] = address.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups =
    tail === undefined
      ? left
      : [...left, ...Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((group) => parseInt(group, 16).toString(16))
    .join(':')}::/64`;
}
