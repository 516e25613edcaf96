import type { IncomingMessage } from 'node:http';

import proxyAddr from '@fastify/proxy-addr';

import { dropUnreadableForwardedFor, trustProxyOption } from '../../src/common/http/trust-proxy';

/** What Fastify's request.ip gives for a socket peer and an X-Forwarded-For, after the cleaning hook. */
function clientAddress(setting: Parameters<typeof trustProxyOption>[0], peer: string, forwardedFor?: string): string {
  const raw = {
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
    socket: { remoteAddress: peer },
  } as unknown as IncomingMessage;
  dropUnreadableForwardedFor(raw);
  const trust = trustProxyOption(setting);
  if (trust === false) return peer;
  const all = proxyAddr.all(raw, trust);
  return all[all.length - 1];
}

describe('client address behind proxies', () => {
  it('ignores X-Forwarded-For when no proxy is trusted', () => {
    expect(trustProxyOption(false)).toBe(false);
  });

  it('with one hop, takes the address the proxy appended, not what the client wrote before it', () => {
    expect(clientAddress(1, '10.0.0.2', '6.6.6.6, 203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddress(1, '10.0.0.2', '203.0.113.9')).toBe('203.0.113.9');
    expect(clientAddress(2, '10.0.0.2', '6.6.6.6, 203.0.113.9, 10.0.0.1')).toBe('203.0.113.9');
  });

  it('with a list, reads past trusted proxies only, right to left', () => {
    expect(clientAddress(['10.0.0.0/8'], '10.0.0.2', '6.6.6.6, 203.0.113.9, 10.0.0.1')).toBe('203.0.113.9');
    // A peer that is not a trusted proxy is the client, whatever it claims.
    expect(clientAddress(['10.0.0.0/8'], '198.51.100.7', '6.6.6.6')).toBe('198.51.100.7');
    expect(clientAddress(['::1', '127.0.0.1'], '::1', '2001:db8::1')).toBe('2001:db8::1');
  });

  it.each([
    '"><script>',
    'x'.repeat(100),
    '203.0.113.9:4711',
    'fe80::1%eth0',
    'unknown',
    '',
    '1.2.3.4.5',
    '::ffff:999.1.1.1',
  ])('ignores the malformed forwarded entry %j and what stands left of it', (bad) => {
    expect(clientAddress(1, '10.0.0.2', bad)).toBe('10.0.0.2');
    expect(clientAddress(2, '10.0.0.2', `6.6.6.6, ${bad}, 203.0.113.9`)).toBe('203.0.113.9');
    expect(clientAddress(3, '10.0.0.2', `6.6.6.6, ${bad}, 203.0.113.9`)).toBe('203.0.113.9');
  });

  it('reads repeated X-Forwarded-For headers as one list', () => {
    const raw = { headers: { 'x-forwarded-for': ['6.6.6.6', 'junk, 203.0.113.9'] } } as unknown as IncomingMessage;
    dropUnreadableForwardedFor(raw);
    expect(raw.headers['x-forwarded-for']).toBe('203.0.113.9');
  });

  it('always yields an address that fits the 64-character audit column', () => {
    for (const forwarded of [
      'ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255',
      `${'a'.repeat(80)}, 1.2.3.4`,
      '0:0:0:0:0:ffff:192.168.100.228',
    ]) {
      expect(clientAddress(1, '10.0.0.2', forwarded).length).toBeLessThanOrEqual(64);
    }
  });
});
