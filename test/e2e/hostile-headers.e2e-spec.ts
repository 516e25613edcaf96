import { isIP } from 'node:net';

import fc from 'fast-check';

import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { headerText } from '../support/hostile-input';
import { propertyRuns } from '../support/property-runs';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';
import { newUser } from '../support/users';

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

// ---------------------------------------------------------------------------------------
// The edges a third round of probing found: each property states the RFC's rule, not the
// code's, so that a generator which had existed then would have found the finding.

const etagText = fc.oneof(fc.constantFrom('"x"', 'W/"x"', '""', '*', ' * '), headerText(30));

/** The planet's current tag, as it is, weak, coded, or inside a value the grammar refuses. */
const currentTag = fc.constantFrom(
  'current',
  'current-weak',
  'current-gzip',
  'current-after-garbage',
  'current-then-star',
  'current-with-parameter',
);

it('answers PUT and DELETE with any If-Match and If-None-Match as RFC 9110 section 13.2.2 says', async () => {
  const owner = (await newUser(t)).basic;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom('PUT', 'DELETE'),
      fc.option(fc.oneof(etagText, currentTag), { nil: undefined }),
      fc.option(fc.oneof(etagText, currentTag), { nil: undefined }),
      async (method, ifMatchSent, ifNoneMatchSent) => {
        const id = (
          await t.request({
            method: 'POST',
            url: '/planets',
            headers: { authorization: owner },
            payload: { name: 'P' },
          })
        ).json().id;
        const etag = String((await t.request({ method: 'GET', url: `/planets/${id}` })).headers.etag);
        const resolve = (sent: string | undefined) =>
          ({
            current: etag,
            'current-weak': `W/${etag}`,
            'current-gzip': `${etag.slice(0, -1)}-gzip"`,
            'current-after-garbage': `garbage ${etag}`,
            'current-then-star': `${etag}, *`,
            'current-with-parameter': `${etag};q=1`,
          })[sent ?? ''] ?? sent;
        const [ifMatch, ifNoneMatch] = [resolve(ifMatchSent), resolve(ifNoneMatchSent)];
        const headers: Record<string, string> = { authorization: owner };
        if (ifMatch !== undefined) headers['if-match'] = ifMatch;
        if (ifNoneMatch !== undefined) headers['if-none-match'] = ifNoneMatch;
        const res = await t.request({
          method,
          url: `/planets/${id}`,
          headers,
          ...(method === 'PUT' ? { payload: { name: 'Q' } } : {}),
        });
        // Strong comparison for If-Match, weak for If-None-Match; a tag's coding suffix names the same state.
        const tags = (value: string) =>
          [...value.matchAll(/(W\/)?"([^"]*)"/g)].map(([, weak, opaque]) => ({
            weak: !!weak,
            opaque: opaque.replace(/-(gzip|br)$/, ''),
          }));
        const opaque = etag.slice(1, -1);
        // A value outside the grammar, `*` or 1#entity-tag (RFC 9110 sections 8.8.3, 13.1.1, 13.1.2), is refused
        // (400), never searched for a tag.
        const entityTag = String.raw`(W\/)?"[\x21\x23-\x7e\x80-\xff]*"`;
        const tagList = new RegExp(String.raw`^[\t ,]*${entityTag}([\t ]*,[\t ,]*${entityTag})*[\t ,]*$`);
        const wellFormed = (value: string | undefined) =>
          value === undefined || value.trim() === '*' || tagList.test(value);
        const matchHolds =
          ifMatch === undefined ||
          ifMatch.trim() === '*' ||
          tags(ifMatch).some((tag) => !tag.weak && tag.opaque === opaque);
        const noneMatchHolds =
          ifNoneMatch === undefined ||
          (ifNoneMatch.trim() !== '*' && !tags(ifNoneMatch).some((tag) => tag.opaque === opaque));
        const expected =
          !wellFormed(ifMatch) || !wellFormed(ifNoneMatch)
            ? 400
            : matchHolds && noneMatchHolds
              ? method === 'PUT'
                ? 200
                : 204
              : 412;
        expect({ method, ifMatch, ifNoneMatch, status: res.statusCode }).toEqual({
          method,
          ifMatch,
          ifNoneMatch,
          status: expected,
        });
      },
    ),
    propertyRuns(25),
  );
}, 120_000);

const codingName = fc.constantFrom('gzip', 'br', 'x-gzip', 'identity', '*', 'deflate', 'GZIP', 'Br', 'zstd');
const weight = fc.oneof(
  fc.constantFrom('', ';q=0', ';q=0.0', ';q=0.000', ';q=1', ';q=0.5', ';q=0.001', ';Q=0'),
  headerText(6).map((text) => `;q=${text}`),
);
const acceptEncoding = fc
  .array(
    fc.tuple(codingName, weight).map(([name, w]) => `${name}${w}`),
    { maxLength: 5 },
  )
  .map((members) => members.join(', '));

/** The weight the client gives `coding`, as RFC 9110 section 12.5.3 reads the field. */
function weightOf(header: string, coding: 'br' | 'gzip'): number {
  let named: number | undefined;
  let wildcard: number | undefined;
  for (const member of header.split(',')) {
    const [name, ...params] = member.split(';').map((part) => part.trim().toLowerCase());
    const q = params.find((param) => param.startsWith('q='))?.slice(2);
    const w = q === undefined ? 1 : /^(0(\.\d{0,3})?|1(\.0{0,3})?)$/.test(q) ? Number(q) : 0;
    const which = name === 'x-gzip' ? 'gzip' : name;
    if (which === coding) named = Math.min(w, named ?? 1);
    if (which === '*') wildcard = Math.min(w, wildcard ?? 1);
  }
  return named ?? wildcard ?? 0;
}

it('never sends a content coding the client weighed 0 or did not accept, and sends the one it weighs highest', async () => {
  const owner = (await newUser(t)).basic;
  const large = { name: 'Large', description: 'x'.repeat(2000) };
  const id = (
    await t.request({ method: 'POST', url: '/planets', headers: { authorization: owner }, payload: large })
  ).json().id;
  await fc.assert(
    fc.asyncProperty(acceptEncoding, async (header) => {
      const res = await t.request({ method: 'GET', url: `/planets/${id}`, headers: { 'accept-encoding': header } });
      const sent = res.headers['content-encoding'] as 'br' | 'gzip' | undefined;
      const [br, gzip] = [weightOf(header, 'br'), weightOf(header, 'gzip')];
      const best = Math.max(br, gzip);
      const expected = best === 0 ? undefined : br === best ? 'br' : 'gzip';
      expect({ header, sent }).toEqual({ header, sent: expected });
    }),
    propertyRuns(60),
  );
}, 120_000);

it('answers any OPTIONS, preflight or not, with a 204 preflight or a problem document, never plain text', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.option(origin, { nil: undefined }),
      fc.option(fc.oneof(fc.constantFrom('GET', 'PUT', 'DELETE', 'PATCH', ''), headerText(10)), { nil: undefined }),
      fc.option(fc.oneof(fc.constantFrom('x-api-key', 'authorization, content-type', ''), headerText(30)), {
        nil: undefined,
      }),
      fc.constantFrom('/planets', '/planets/1', '/auth/regions/me', '/nowhere', '/'),
      async (sentOrigin, method, requestHeaders, url) => {
        const headers: Record<string, string> = {};
        if (sentOrigin !== undefined) headers.origin = sentOrigin;
        if (method !== undefined) headers['access-control-request-method'] = method;
        if (requestHeaders !== undefined) headers['access-control-request-headers'] = requestHeaders;
        const res = await t.app.inject({ method: 'OPTIONS', url, headers });
        const preflight = Boolean(sentOrigin) && Boolean(method);
        if (preflight) expect({ headers, status: res.statusCode }).toEqual({ headers, status: 204 });
        else {
          expect({ headers, type: res.headers['content-type'] }).toEqual({
            headers,
            type: expect.stringMatching(/^application\/problem\+json/),
          });
          expect([404, 405]).toContain(res.statusCode);
        }
      },
    ),
    propertyRuns(60),
  );
}, 120_000);

it('refuses any request with more than one Host line with a 400 problem, and builds no URI from either', async () => {
  const hostValue = fc.oneof(
    fc.constantFrom('good.example', 'user@evil.example/x', 'localhost:80', ''),
    headerText(20),
  );
  await fc.assert(
    fc.asyncProperty(fc.array(hostValue, { minLength: 2, maxLength: 3 }), async (hosts) => {
      const res = await t.app.inject({
        method: 'POST',
        url: '/auth/region/api-keys',
        headers: { host: hosts, 'x-api-key': region.key } as Record<string, string | string[]>,
        payload: {},
      });
      expect({ hosts, status: res.statusCode, type: res.headers['content-type'] }).toEqual({
        hosts,
        status: 400,
        type: expect.stringMatching(/^application\/problem\+json/),
      });
      expect(res.headers.location).toBeUndefined();
    }),
    propertyRuns(30),
  );
}, 120_000);
