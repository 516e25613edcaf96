import { isIP } from 'node:net';

import fc from 'fast-check';

import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { headerText } from '../support/hostile-input';
import { propertyRuns } from '../support/property-runs';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';

/**
 * Property-based hostile headers, behind one trusted proxy with CORS on: whatever a client
 * (or the proxy, passing it on) puts in X-Forwarded-For, X-Request-ID, Origin or If-Match,
 * the answer is never a 500, the client address recorded is a plain IP address that fits
 * its column, the request id echoed is sane and never a key, and CORS answers only the
 * allowed origin.
 */

const ALLOWED_ORIGIN = 'https://planner.example.org';
const BALANCER = '10.0.0.2';
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
let t: TestApp;
let region: RegionFixture;

beforeAll(async () => {
  t = await startTestApp({ TRUST_PROXY: '1', CORS_ORIGINS: ALLOWED_ORIGIN, MAX_API_KEYS_PER_REGION: '10000' });
  region = await newRegion(t);
});
afterAll(async () => t?.close());

const address = fc.oneof(fc.ipV4(), fc.ipV6(), fc.ipV4Extended());
const forwardedEntry = fc.oneof(
  { arbitrary: address, weight: 3 },
  { arbitrary: headerText(70), weight: 2 },
  fc.constantFrom('unknown', '"><script>', '1.2.3.4:80', 'fe80::1%eth0', 'x'.repeat(100)),
);
const forwardedFor = fc.array(forwardedEntry, { maxLength: 5 }).map((entries) => entries.join(', '));
const requestId = fc.oneof(
  headerText(140),
  fc.constant(generateApiKey()),
  fc.uuid(),
  fc.stringMatching(/^[A-Za-z0-9._:-]{1,130}$/),
);
const origin = fc.oneof(
  fc.constantFrom(
    ALLOWED_ORIGIN,
    `${ALLOWED_ORIGIN}/`,
    'https://planner.example.org.evil.example',
    'http://planner.example.org',
    'null',
    '',
  ),
  fc.webUrl().map((url) => new URL(url).origin),
  headerText(60),
);
const ifMatch = fc.oneof(headerText(60), fc.constantFrom('*', '"abc"', 'W/"abc"', '"a", "b"'));

/** The client address the service must record: the entry the proxy appended, if it is a plain IP. */
function expectedClientAddress(header: string): string {
  const last = header.split(',').at(-1)?.trim() ?? '';
  return isIP(last) && !last.includes('%') && last.length <= 45 ? last : BALANCER;
}

it('answers any forwarded address, request id, origin and If-Match with no 5xx, a sane request id, a sane client address and CORS for the allowed origin only', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.record({
        xff: fc.option(forwardedFor, { nil: undefined }),
        id: fc.option(requestId, { nil: undefined }),
        origin: fc.option(origin, { nil: undefined }),
        ifMatch: fc.option(ifMatch, { nil: undefined }),
      }),
      fc.constantFrom('create-key', 'read-region', 'planets'),
      async (sent, route) => {
        const headers: Record<string, string> = {};
        if (sent.xff !== undefined) headers['x-forwarded-for'] = sent.xff;
        if (sent.id !== undefined) headers['x-request-id'] = sent.id;
        if (sent.origin !== undefined) headers.origin = sent.origin;
        if (sent.ifMatch !== undefined) headers['if-match'] = sent.ifMatch;
        const res = await t.request(
          route === 'create-key'
            ? {
                method: 'POST',
                url: '/auth/region/api-keys',
                remoteAddress: BALANCER,
                headers: { ...headers, 'x-api-key': region.key },
                payload: {},
              }
            : route === 'read-region'
              ? {
                  method: 'GET',
                  url: '/auth/regions/me',
                  remoteAddress: BALANCER,
                  headers: { ...headers, 'x-api-key': region.key },
                }
              : { method: 'GET', url: '/planets?limit=1', remoteAddress: BALANCER, headers },
        );
        expect({ sent, status: res.statusCode }).toEqual({ sent, status: expect.any(Number) });
        expect(res.statusCode).toBeLessThan(500);

        const id = String(res.headers['x-request-id']);
        expect(id).toMatch(SANE_REQUEST_ID);
        expect(id).not.toMatch(/rk_[0-9A-Za-z]{16,}/);
        if (sent.id !== undefined && SANE_REQUEST_ID.test(sent.id) && !sent.id.startsWith('rk_'))
          expect(id).toBe(sent.id);

        const allowOrigin = res.headers['access-control-allow-origin'];
        if (sent.origin === ALLOWED_ORIGIN) expect(allowOrigin).toBe(ALLOWED_ORIGIN);
        else expect(allowOrigin).toBeUndefined();

        if (route === 'create-key') {
          expect(res.statusCode).toBe(201);
          const events = (
            await t.request({ method: 'GET', url: '/auth/region/events?limit=1', headers: { 'x-api-key': region.key } })
          ).json();
          const recorded = events.data[0].clientAddress as string;
          expect(recorded).toBe(expectedClientAddress(sent.xff ?? ''));
          expect(recorded.length).toBeLessThanOrEqual(45);
        }
      },
    ),
    propertyRuns(300),
  );
}, 120_000);

const forwardedHostEntry = fc.oneof(
  {
    arbitrary: fc.constantFrom('api.example.org', 'API.Example.org:8443', '[2001:db8::1]:443', '203.0.113.9'),
    weight: 3,
  },
  { arbitrary: headerText(40), weight: 2 },
  fc.constantFrom('evil.example/x?y', 'user@evil.example', 'evil.example:99999', '[fe80::1%eth0]', '<script>', ''),
);
const forwardedProtoEntry = fc.oneof(
  fc.constantFrom('https', 'HTTP', 'http', 'javascript', 'https://', ''),
  headerText(12),
);
const forwardedList = (entry: fc.Arbitrary<string>) =>
  fc.array(entry, { minLength: 1, maxLength: 3 }).map((entries) => entries.join(', '));

it('builds Location from forwarded scheme and host only when they are plain, and never reflects anything else', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.option(forwardedList(forwardedHostEntry), { nil: undefined }),
      fc.option(forwardedList(forwardedProtoEntry), { nil: undefined }),
      async (xfh, xfp) => {
        const headers: Record<string, string> = { 'x-api-key': region.key };
        if (xfh !== undefined) headers['x-forwarded-host'] = xfh;
        if (xfp !== undefined) headers['x-forwarded-proto'] = xfp;
        const res = await t.request({
          method: 'POST',
          url: '/auth/region/api-keys',
          remoteAddress: BALANCER,
          headers,
          payload: {},
        });
        expect({ xfh, xfp, status: res.statusCode }).toEqual({ xfh, xfp, status: 201 });
        const location = /^(https?):\/\/([A-Za-z0-9._\-[\]:]+)\/auth\/region\/api-keys\/([0-9a-f-]{36})$/.exec(
          String(res.headers.location),
        );
        expect({ xfh, xfp, location: res.headers.location, matches: location !== null }).toEqual({
          xfh,
          xfp,
          location: res.headers.location,
          matches: true,
        });
        const [, scheme, host, id] = location!;
        expect(id).toBe(res.json().id);
        // The proxy's entry (the last) when it is usable, else the request's own.
        const lastHost = xfh?.split(',').at(-1)?.trim().toLowerCase();
        expect([lastHost, 'localhost:80']).toContain(host);
        const lastProto = xfp?.split(',').at(-1)?.trim().toLowerCase();
        expect(scheme === 'http' || scheme === lastProto).toBe(true);
      },
    ),
    propertyRuns(150),
  );
}, 120_000);
