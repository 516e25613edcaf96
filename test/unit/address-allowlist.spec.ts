import { admitsSomeAddress, allowlistOf, allowlistWithin, parseCidr } from '../../src/region-keys/address-allowlist';

describe('parseCidr', () => {
  it.each([
    ['192.0.2.0/24', '192.0.2.0/24'],
    ['192.0.2.7', '192.0.2.7/32'],
    ['0.0.0.0/0', '0.0.0.0/0'],
    ['2001:DB8:0:0::/64', '2001:db8::/64'],
    ['2001:db8::1', '2001:db8::1/128'],
    ['8000::/1', '8000::/1'],
    ['::/81', '::/81'],
    ['::/96', '::/96'],
    // Networks that hold some address a client connects from, beside ones none does.
    ['0.0.0.0/7', '0.0.0.0/7'],
    ['224.0.0.0/3', '224.0.0.0/3'],
    ['255.255.255.254/31', '255.255.255.254/31'],
    ['::/127', '::/127'],
    // IPv4-mapped networks are the IPv4 networks they map: what an IPv4 client is checked against.
    ['::ffff:192.0.2.0/120', '192.0.2.0/24'],
    ['::FFFF:c000:207', '192.0.2.7/32'],
    ['::ffff:0:0/96', '0.0.0.0/0'],
    // An IPv4 tail after :: alone is IPv4-compatible (RFC 4291), not mapped.
    ['::192.0.2.7', '::c000:207/128'],
  ])('writes %s as %s', (input, cidr) => {
    expect(parseCidr(input)).toEqual({ cidr });
  });

  it.each([
    ['example.com', 'IPv4 or IPv6'],
    ['10.1', 'IPv4 or IPv6'],
    ['192.0.2.0/33', 'prefix length of 0 to 32'],
    ['2001:db8::/129', 'prefix length of 0 to 128'],
    ['192.0.2.0/', 'prefix length'],
    ['192.0.2.0/+8', 'prefix length'],
    ['fe80::1%eth0', 'zone id'],
    ['192.0.2.1/24', 'the network is 192.0.2.0/24'],
    ['2001:db8::1/64', 'the network is 2001:db8::/64'],
    // Networks holding all of ::ffff:0:0/96 would admit every IPv4 client.
    ['::/0', 'every IPv4 address'],
    ['::/80', 'every IPv4 address'],
    ['::ff00:0:0/88', 'every IPv4 address'],
    // No client connects from these: a key confined to them could never be used.
    ['0.0.0.0/32', 'no address a client connects from'],
    ['0.0.0.0/8', 'no address a client connects from'],
    ['0.1.2.3', 'no address a client connects from'],
    ['224.0.0.0/4', 'no address a client connects from'],
    ['239.1.2.3', 'no address a client connects from'],
    ['255.255.255.255', 'no address a client connects from'],
    ['::', 'no address a client connects from'],
    ['::ffff:0.0.0.0/104', 'no address a client connects from'],
    ['ff02::1', 'no address a client connects from'],
  ])('refuses %s (%s)', (input, reason) => {
    expect(parseCidr(input)).toEqual({ error: expect.stringContaining(reason) });
  });
});

describe('allowlistOf', () => {
  const allows = allowlistOf(['192.0.2.0/24', '2001:db8::/32']);

  it.each([
    ['192.0.2.255', true],
    ['192.0.3.0', false],
    ['::ffff:192.0.2.9', true],
    ['::FFFF:192.0.3.9', false],
    ['2001:db8:ffff::1', true],
    ['2001:db9::1', false],
    ['fe80::1%eth0', false],
    ['not an address', false],
  ])('%s: %s', (address, expected) => {
    expect(allows(address)).toBe(expected);
  });
});

describe('admitsSomeAddress', () => {
  it.each([
    [null, true],
    [['192.0.2.0/24'], true],
    [[], false],
  ])('%j: %s', (cidrs, expected) => {
    expect(admitsSomeAddress(cidrs)).toBe(expected);
  });
});

describe('allowlistWithin', () => {
  const outer = ['203.0.113.0/24', '2001:db8::/48'];
  it.each([
    [['203.0.113.128/25'], true],
    [['203.0.113.0/24', '2001:db8:0:1::/64'], true],
    [['203.0.113.7/32', '2001:db8::1/128'], true],
    [['203.0.0.0/16'], false],
    [['203.0.113.0/24', '198.51.100.0/24'], false],
    [['2001:db9::/48'], false],
    [['0.0.0.0/0'], false],
  ])('takes %j as within 203.0.113.0/24 and 2001:db8::/48: %s', (inner, within) => {
    expect(allowlistWithin(inner, outer)).toBe(within);
  });
});
