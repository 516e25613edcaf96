import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * A key's allowlist: CIDRs (IPv4 and IPv6) stored in one canonical form, so that a listing
 * shows what is enforced and two spellings of one network compare equal.
 */

/** The canonical form of a CIDR, or an explanation of why it is not one. */
export type ParsedCidr = { cidr: string } | { error: string };

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * Parses `address/prefix` or a bare address (a /32 or /128). Zone ids (`fe80::1%eth0`) are
 * refused: they name an interface of the client, not a network. Bits set past the prefix
 * are refused rather than dropped, since `10.1.2.3/8` more likely means a typo than all of 10/8.
 */
export function parseCidr(input: string): ParsedCidr {
  if (input.includes('%')) return { error: 'must not hold a zone id (%…)' };
  const slash = input.indexOf('/');
  const address = slash < 0 ? input : input.slice(0, slash);
  const prefixText = slash < 0 ? null : input.slice(slash + 1);
  const family = isIPv4(address) ? 4 : isIPv6(address) ? 6 : null;
  if (family === null)
    return { error: 'must be an IPv4 or IPv6 address or CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32' };
  const bits = family === 4 ? 32 : 128;
  if (prefixText !== null && !/^\d{1,3}$/.test(prefixText))
    return { error: `must have a prefix length of 0 to ${bits}` };
  const prefix = prefixText === null ? bits : Number(prefixText);
  if (prefix > bits) return { error: `must have a prefix length of 0 to ${bits}` };
  const bytes = family === 4 ? address.split('.').map(Number) : ipv6Bytes(address);
  const network = bytes.map((byte, i) => byte & (0xff << Math.max(0, 8 - Math.max(0, prefix - i * 8))) & 0xff);
  if (network.some((byte, i) => byte !== bytes[i])) {
    return { error: `has bits set past its /${prefix}; the network is ${formatAddress(family, network)}/${prefix}` };
  }
  return { cidr: `${formatAddress(family, network)}/${prefix}` };
}

/** Checks a client address against an allowlist; built once per request, and only for keys that have one. */
export function allowlistOf(cidrs: readonly string[]): (clientAddress: string) => boolean {
  const list = new BlockList();
  for (const cidr of cidrs) {
    const [network, prefix] = cidr.split('/');
    list.addSubnet(network, Number(prefix), isIPv4(network) ? 'ipv4' : 'ipv6');
  }
  return (clientAddress) => {
    // A dual-stack socket shows an IPv4 client as ::ffff:a.b.c.d: it matches IPv4 networks.
    const address = IPV4_MAPPED.exec(clientAddress)?.[1] ?? clientAddress.split('%')[0];
    if (isIPv4(address)) return list.check(address, 'ipv4');
    return isIPv6(address) && list.check(address, 'ipv6');
  };
}

function ipv6Bytes(address: string): number[] {
  // An embedded IPv4 tail (::ffff:1.2.3.4) becomes its two groups.
  const tail = /(\d{1,3}(?:\.\d{1,3}){3})$/.exec(address);
  let text = address;
  if (tail) {
    const [a, b, c, d] = tail[1].split('.').map(Number);
    text = address.slice(0, -tail[1].length) + `${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, rest] = text.split('::');
  const left = head ? head.split(':') : [];
  const right = rest ? rest.split(':') : [];
  const groups =
    rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return groups.flatMap((group) => {
    const value = parseInt(group, 16);
    return [value >> 8, value & 0xff];
  });
}

function formatAddress(family: 4 | 6, bytes: number[]): string {
  if (family === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => ((bytes[2 * i] << 8) | bytes[2 * i + 1]).toString(16)).join(':');
  // The WHATWG URL parser writes IPv6 in RFC 5952's canonical form (lower case, longest zero run as ::).
  return new URL(`http://[${groups}]/`).hostname.slice(1, -1);
}
