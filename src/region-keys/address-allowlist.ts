import ipaddr from 'ipaddr.js';

import { type IpAddress, parseIpAddress, unmapped } from '../common/http';

/**
 * A key's allowlist: CIDRs (IPv4 and IPv6) stored in one canonical form, so that a listing
 * shows what is enforced and two spellings of one network compare equal.
 */

/** The canonical form of a CIDR, or an explanation of why it is not one. */
export type ParsedCidr = { cidr: string } | { error: string };

/** ::ffff:0:0/96, the IPv4-mapped IPv6 addresses: how a dual-stack socket shows an IPv4 client. */
const MAPPED: [IpAddress, number] = ipaddr.parseCIDR('::ffff:0:0/96');

/**
 * Networks no TCP client connects from: "this network" and the unspecified address, multicast,
 * the limited broadcast. A key confined to them could never be used.
 */
const NO_CLIENT_FROM = ['0.0.0.0/8', '224.0.0.0/4', '255.255.255.255/32', '::/128', 'ff00::/8'].map((cidr) =>
  ipaddr.parseCIDR(cidr),
);

/**
 * Parses `address/prefix` or a bare address (a /32 or /128). Zone ids (`fe80::1%eth0`) are
 * refused: they name an interface of the client, not a network. Bits set past the prefix
 * are refused rather than dropped, since `10.1.2.3/8` more likely means a typo than all of 10/8.
 * An IPv4-mapped network (`::ffff:192.0.2.0/120`) is the IPv4 network it maps (`192.0.2.0/24`),
 * as the client addresses it must match are seen as IPv4 (see allowlistOf). A wider IPv6
 * network holding all of ::ffff:0:0/96 (`::/0`, `::/80`) is refused: it would admit every IPv4
 * client as well, which whoever writes `::/0` beside some IPv4 networks hardly means. So is a
 * network within NO_CLIENT_FROM: a key confined to it, the region's last manager even, could never be used.
 */
export function parseCidr(input: string): ParsedCidr {
  if (input.includes('%')) return { error: 'must not hold a zone id (%…)' };
  const slash = input.indexOf('/');
  const address = parseIpAddress(slash < 0 ? input : input.slice(0, slash));
  if (address === null)
    return { error: 'must be an IPv4 or IPv6 address or CIDR, e.g. 203.0.113.0/24 or 2001:db8::/32' };
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  const prefixText = slash < 0 ? String(bits) : input.slice(slash + 1);
  const prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : NaN;
  if (!(prefix <= bits)) return { error: `must have a prefix length of 0 to ${bits}` };
  const network = networkOf(address, prefix);
  if (network.toString() !== address.toString()) {
    return { error: `has bits set past its /${prefix}; the network is ${network.toString()}/${prefix}` };
  }
  let [start, length] = [network, prefix];
  if (address.kind() === 'ipv6' && network.match(MAPPED[0], Math.min(prefix, MAPPED[1]))) {
    if (prefix < MAPPED[1]) {
      return {
        error:
          'holds all of ::ffff:0:0/96 (IPv4 clients on a dual-stack socket), so it would admit every IPv4 address; ' +
          'list IPv6 networks that do not, and IPv4 networks as such (0.0.0.0/0 for all of them)',
      };
    }
    [start, length] = [unmapped(network), prefix - MAPPED[1]];
  }
  const within = ([other, otherLength]: [IpAddress, number]) =>
    start.kind() === other.kind() && length >= otherLength && start.match(other, otherLength);
  if (NO_CLIENT_FROM.some(within)) {
    return { error: 'admits no address a client connects from (unspecified, multicast or broadcast addresses only)' };
  }
  return { cidr: `${start.toString()}/${length}` };
}

/**
 * Whether a key with this allowlist can be used at all: null admits any address, and every
 * entry parseCidr accepts admits some client's address, so only an empty list admits none. Such a key
 * never keeps a region manageable (an empty list is refused on input; rows from before that may hold one).
 */
export const admitsSomeAddress = (cidrs: readonly string[] | null): boolean => cidrs === null || cidrs.length > 0;

/**
 * Whether every network of `inner` lies within some network of `outer`: an allowlist that
 * narrows `outer` (admits no address it refuses), as opposed to one that widens it.
 */
export function allowlistWithin(inner: readonly string[], outer: readonly string[]): boolean {
  const networks = outer.map((cidr) => ipaddr.parseCIDR(cidr));
  return inner.every((cidr) => {
    const [address, prefix] = ipaddr.parseCIDR(cidr);
    return networks.some(
      ([network, bits]) => address.kind() === network.kind() && prefix >= bits && address.match(network, bits),
    );
  });
}

/** The first `prefix` bits of `address`, the rest zero. */
const networkOf = (address: IpAddress, prefix: number): IpAddress =>
  address instanceof ipaddr.IPv4
    ? ipaddr.IPv4.networkAddressFromCIDR(`${address.toString()}/${prefix}`)
    : ipaddr.IPv6.networkAddressFromCIDR(`${address.toString()}/${prefix}`);

/**
 * Checks a client address against an allowlist; built once per request, and only for keys that
 * have one. A client that is IPv4, or IPv4 mapped into IPv6, matches IPv4 networks, and IPv6
 * networks by its mapped form too, so an IPv6 network holding ::ffff:0:0/96 stored before
 * parseCidr refused it still admits IPv4 clients.
 */
export function allowlistOf(cidrs: readonly string[]): (clientAddress: string) => boolean {
  const networks = cidrs.map((cidr) => ipaddr.parseCIDR(cidr));
  return (clientAddress) => {
    const parsed = parseIpAddress(clientAddress.split('%')[0]);
    if (parsed === null) return false;
    const address = unmapped(parsed);
    const forms = address instanceof ipaddr.IPv4 ? [address, address.toIPv4MappedAddress()] : [address];
    return networks.some(([network, prefix]) =>
      forms.some((form) => form.kind() === network.kind() && form.match(network, prefix)),
    );
  };
}
