import { BlockList, isIPv4, isIPv6 } from 'node:net';

/**
 * A key's allowlist: CIDRs (IPv4 and IPv6) stored in one canonical form, so that a listing
 * shows what is enforced and two spellings of one network compare equal.
 */

/** The canonical form of a CIDR, or an explanation of why it is not one. */
export type ParsedCidr = { cidr: string } | { error: string };

const IPV4_MAPPED = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/** ::ffff:0:0/96, the IPv4-mapped IPv6 addresses: how a dual-stack socket shows an IPv4 client. */
const MAPPED_PREFIX = [...Array<number>(10).fill(0), 0xff, 0xff, 0, 0, 0, 0];
const MAPPED_BITS = 96;

/**
 * Parses `address/prefix` or a bare address (a /32 or /128). Zone ids (`fe80::1%eth0`) are
 * refused: they name an interface of the client, not a network. Bits set past the prefix
 * are refused rather than dropped, since `10.1.2.3/8` more likely means a typo than all of 10/8.
 * An IPv4-mapped network (`::ffff:192.0.2.0/120`) is the IPv4 network it maps (`192.0.2.0/24`),
 * as the client addresses it must match are seen as IPv4 (see allowlistOf). A wider IPv6
 * network holding all of ::ffff:0:0/96 (`::/0`, `::/80`) is refused: it would admit every IPv4
 * client as well, which whoever writes `::/0` beside some IPv4 networks hardly means.
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
  const network = networkOf(bytes, prefix);
  if (network.some((byte, i) => byte !== bytes[i])) {
    return { error: `has bits set past its /${prefix}; the network is ${formatAddress(family, network)}/${prefix}` };
  }
  if (family === 6 && sameNetwork(network, MAPPED_PREFIX, Math.min(prefix, MAPPED_BITS))) {
    if (prefix >= MAPPED_BITS) return { cidr: `${network.slice(12).join('.')}/${prefix - MAPPED_BITS}` };
    return {
      error:
        'holds all of ::ffff:0:0/96 (IPv4 clients on a dual-stack socket), so it would admit every IPv4 address; ' +
        'list IPv6 networks that do not, and IPv4 networks as such (0.0.0.0/0 for all of them)',
    };
  }
  return { cidr: `${formatAddress(family, network)}/${prefix}` };
}

/**
 * Whether a key with this allowlist can be used at all: null admits any address, and every
 * entry parseCidr accepts admits its network, so only an empty list admits none. Such a key
 * never keeps a region manageable (an empty list is refused on input; rows from before that may hold one).
 */
export const admitsSomeAddress = (cidrs: readonly string[] | null): boolean => cidrs === null || cidrs.length > 0;

/** The first `prefix` bits of `bytes`, the rest zero. */
const networkOf = (bytes: readonly number[], prefix: number): number[] =>
  bytes.map((byte, i) => byte & (0xff << Math.max(0, 8 - Math.max(0, prefix - i * 8))) & 0xff);

const sameNetwork = (a: readonly number[], b: readonly number[], prefix: number): boolean => {
  const [x, y] = [networkOf(a, prefix), networkOf(b, prefix)];
  return x.every((byte, i) => byte === y[i]);
};

/**
 * Checks a client address against an allowlist; built once per request, and only for keys that
 * have one. BlockList matches an IPv4 address against IPv6 networks by its mapped form too, so
 * an IPv6 network holding ::ffff:0:0/96 stored before parseCidr refused it still admits IPv4 clients.
 */
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
