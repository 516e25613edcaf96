import { clientAddressOf, MAX_USER_AGENT_LENGTH, userAgentOf } from '../../src/region-keys/key-usage/key-clients';

describe('clientAddressOf', () => {
  it('gives an address one spelling: IPv4-mapped IPv6 as IPv4, IPv6 in canonical form', () => {
    expect(clientAddressOf('192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressOf('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(clientAddressOf('::FFFF:c000:0201')).toBe('192.0.2.1');
    expect(clientAddressOf('2001:0DB8:0000::0001')).toBe('2001:db8::1');
    expect(clientAddressOf('2001:db8::1')).toBe('2001:db8::1');
  });

  it('keeps what is not an address as it came, cut at 64 characters', () => {
    expect(clientAddressOf('unknown')).toBe('unknown');
    expect(clientAddressOf('x'.repeat(100))).toBe('x'.repeat(64));
  });
});

describe('userAgentOf', () => {
  it('keeps a plain user agent as sent, and makes a missing one empty', () => {
    expect(userAgentOf('timetable-sync/2.4 (+https://example.com)')).toBe('timetable-sync/2.4 (+https://example.com)');
    expect(userAgentOf(undefined)).toBe('');
    expect(userAgentOf(['first/1', 'second/2'])).toBe('first/1');
  });

  it('cuts at 200 characters, never inside one', () => {
    expect(userAgentOf('a'.repeat(100_000))).toBe('a'.repeat(MAX_USER_AGENT_LENGTH));
    const emoji = '😀'.repeat(250);
    expect(Array.from(userAgentOf(emoji))).toHaveLength(MAX_USER_AGENT_LENGTH);
    expect(userAgentOf(`${'a'.repeat(199)}😀😀`)).toBe(`${'a'.repeat(199)}😀`);
  });

  it('shows control characters (ANSI escapes, NUL, DEL, C1) as U+FFFD', () => {
    expect(userAgentOf('\u001b[2J\u001b[31mred\u0000\u007f\u009b')).toBe('\uFFFD[2J\uFFFD[31mred\uFFFD\uFFFD\uFFFD');
  });
});
