import ipaddr from 'ipaddr.js';

/**
 * Limits on TRUST_PROXY's list that @fastify/proxy-addr does not set: it refuses only a /0,
 * and `0.0.0.0/1,128.0.0.0/1` would trust every IPv4 client to name its own address. A proxy
 * network is never wider than an IPv4 /8 or an IPv6 /7 (the widest private ranges: 10.0.0.0/8
 * and fc00::/7), and no set of entries may cover all of IPv4 or all of IPv6.
 */
const WIDEST = { ipv4: 8, ipv6: 7 } as const;
const BITS = { ipv4: 32, ipv6: 128 } as const;

/** proxy-addr's names for address ranges, with the networks it gives them. */
const NAMED: Record<string, string[]> = {
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  loopback: ['127.0.0.1/8', '::1/128'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

type Family = keyof typeof BITS;
interface Network {
  family: Family;
  prefix: number;
  first: bigint;
}

/**
 * An entry as proxy-addr matches it: an address with an optional prefix length (or IPv4
 * netmask). An IPv4-mapped IPv6 network of /96 or longer matches IPv4 clients, so it counts as
 * the IPv4 network it maps. Undefined for what proxy-addr would refuse anyway.
 */
function networkOf(entry: string): Network | undefined {
  const slash = entry.lastIndexOf('/');
  const text = slash < 0 ? entry : entry.slice(0, slash);
  if (!ipaddr.isValid(text)) return undefined;
  let address = ipaddr.parse(text);
  const mask = slash < 0 ? undefined : entry.slice(slash + 1);
  let prefix: number | null = BITS[address.kind()];
  if (mask !== undefined) {
    prefix = /^\d+$/.test(mask)
      ? Number(mask)
      : ipaddr.IPv4.isValid(mask)
        ? ipaddr.IPv4.parse(mask).prefixLengthFromSubnetMask()
        : null;
  }
  if (prefix === null) return undefined;
  if (address instanceof ipaddr.IPv6 && address.isIPv4MappedAddress() && prefix >= 96) {
    address = address.toIPv4Address();
    prefix -= 96;
  }
  const family = address.kind();
  const bits = BigInt(BITS[family]);
  const value = address.toByteArray().reduce((n, byte) => (n << 8n) | BigInt(byte), 0n);
  const size = 1n << (bits - BigInt(prefix));
  return { family, prefix, first: value - (value % size) };
}

/** Whether the networks of one family leave no address of it out. */
function coverAll(networks: Network[], family: Family): boolean {
  const ranges = networks
    .filter((network) => network.family === family)
    .map((network) => [network.first, network.first + (1n << BigInt(BITS[family] - network.prefix))] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  let next = 0n;
  for (const [first, end] of ranges) {
    if (first > next) return false;
    if (end > next) next = end;
  }
  return next >= 1n << BigInt(BITS[family]);
}

/** Why a TRUST_PROXY list that proxy-addr accepts still trusts too many clients, or undefined when it does not. */
export function proxyListProblem(entries: readonly string[]): string | undefined {
  const networks: Network[] = [];
  for (const entry of entries) {
    for (const network of (NAMED[entry] ?? [entry]).map(networkOf)) {
      if (!network) continue;
      if (network.prefix < WIDEST[network.family]) {
        return `TRUST_PROXY entry ${entry} is wider than a proxy network (at most an IPv4 /${WIDEST.ipv4} or an IPv6 /${WIDEST.ipv6}): every client in it could choose its own address`;
      }
      networks.push(network);
    }
  }
  const covered = (['ipv4', 'ipv6'] as const).find((family) => coverAll(networks, family));
  return covered
    ? `TRUST_PROXY entries together cover every ${covered === 'ipv4' ? 'IPv4' : 'IPv6'} address: every client could choose its own address; list the proxies' own addresses or networks`
    : undefined;
}
