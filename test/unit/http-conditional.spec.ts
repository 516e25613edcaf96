import { ApiNoContentResponse, ApiOkResponse, DECORATORS } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';

import {
  ConditionalChange,
  ConditionalGet,
  type EntityTags,
  notModified,
  sendTagged,
} from '../../src/common/http/conditional-request';
import {
  etagForCoding,
  ifMatchFailure,
  ifMatchHolds,
  ifNoneMatchHit,
  parseCondition,
  strongEtag,
} from '../../src/common/http/etag';
import { isPlainHost } from '../../src/common/http/location';
import { DomainError } from '../../src/common/problem/problem';
import { PRECONDITION_FAILED } from '../../src/common/problem/problem-types';
import { rateLimitHeaders, rateLimitPolicyField } from '../../src/common/rate-limit/rate-limit-headers';

const ETAG = strongEtag('{"id":1}');

describe('entity tags', () => {
  it('are the quoted SHA-256 of the content, and differ per content coding', () => {
    expect(ETAG).toMatch(/^"[0-9a-f]{64}"$/);
    expect(strongEtag('{"id":2}')).not.toBe(ETAG);
    expect(etagForCoding(ETAG, 'gzip')).toBe(`${ETAG.slice(0, -1)}-gzip"`);
    expect(etagForCoding('W/"abc"', 'gzip')).toBe('W/"abc"');
    expect(etagForCoding(ETAG, 'identity')).toBe(ETAG);
  });

  it.each([
    [ETAG, ETAG],
    [`W/${ETAG}`, ETAG],
    [`"a", ${ETAG} , "b"`, ETAG],
    [` * `, ETAG],
    [etagForCoding(ETAG, 'br'), etagForCoding(ETAG, 'br')],
    [`W/${etagForCoding(ETAG, 'gzip')}`, etagForCoding(ETAG, 'gzip')],
  ])('If-None-Match %s matches %s weakly', (header, current) => {
    expect(ifNoneMatchHit(header, current)).toBe(true);
  });

  it.each([
    [etagForCoding(ETAG, 'br'), ETAG],
    [ETAG, etagForCoding(ETAG, 'gzip')],
    [etagForCoding(ETAG, 'gzip'), etagForCoding(ETAG, 'br')],
  ])('If-None-Match %s on a read does not match %s, the tag of another coding', (header, current) => {
    expect(ifNoneMatchHit(header, current)).toBe(false);
  });

  it.each([
    [undefined],
    [''],
    ['"a"'],
    [ETAG.slice(1, -1)],
    [`${ETAG.slice(0, -2)}"`],
    [`"${ETAG}"`],
    ['*, "a"'],
    [etagForCoding(ETAG, 'deflate')],
  ])('If-None-Match %s does not match', (header) => {
    expect(ifNoneMatchHit(header, ETAG)).toBe(false);
  });

  it.each([[ETAG], ['*'], [`"a", ${ETAG}`], [etagForCoding(ETAG, 'gzip')]])(
    'If-Match %s holds (strong comparison)',
    (header) => {
      expect(ifMatchHolds(header, ETAG)).toBe(true);
    },
  );

  it.each([[`W/${ETAG}`], ['"a"'], [''], ['junk'], [ETAG.slice(1, -1)], ['"", W/"x"']])(
    'If-Match %s does not hold',
    (header) => {
      expect(ifMatchHolds(header, ETAG)).toBe(false);
    },
  );

  it.each([
    [`garbage ${ETAG}`],
    [`${ETAG}, *`],
    [`*, ${ETAG}`],
    [`${ETAG};q=1`],
    [`${ETAG} ${ETAG}`],
    [`w/${ETAG}`],
    [''],
    [' , '],
    ['W/'],
  ])('%s is not an If-Match or If-None-Match value (RFC 9110), and holds no tag', (header) => {
    expect(parseCondition(header)).toBeUndefined();
    expect(ifMatchHolds(header, ETAG)).toBe(false);
    expect(ifNoneMatchHit(header, ETAG)).toBe(false);
  });

  it('tells a failed If-Match that lists a weak tag from a stale one', () => {
    expect(ifMatchFailure(`W/${ETAG}`, ETAG)).toBe('weak If-Match');
    expect(ifMatchFailure(`"stale", W/${ETAG}`, ETAG)).toBe('weak If-Match');
    expect(ifMatchFailure('"stale"', ETAG)).toBe('If-Match');
    expect(ifMatchFailure(`W/"stale", ${ETAG}`, ETAG)).toBeUndefined();
  });

  it('never lets a weak current tag pass If-Match but *', () => {
    expect(ifMatchHolds('W/"abc"', 'W/"abc"')).toBe(false);
    expect(ifMatchHolds('"abc"', 'W/"abc"')).toBe(false);
    expect(ifMatchHolds('*', 'W/"abc"')).toBe(true);
  });
});

describe('plain hosts (Host, X-Forwarded-Host)', () => {
  it.each([
    'localhost',
    'localhost:80',
    'api.example.org',
    'API.Example.ORG:8443',
    'api.example.org.',
    '203.0.113.5:65535',
    '[::1]',
    '[2001:db8::1]:443',
    '[::ffff:192.0.2.1]',
    'my_service-1:3000',
  ])('accepts %s', (host) => {
    expect(isPlainHost(host)).toBe(true);
  });

  it.each([
    undefined,
    '',
    'a b',
    'evil.example/path',
    'user@evil.example',
    'evil.example:0',
    'evil.example:65536',
    'evil.example:',
    'evil.example:80:80',
    '[::1',
    '[fe80::1%eth0]',
    '[evil.example]',
    '::1',
    '.example',
    'a..b',
    '-a.example',
    'a-.example',
    'xn--b\u00fccher.example',
    'evil.example?x',
    'evil.example#x',
    '%65vil.example',
    `${'a'.repeat(64)}.example`,
    `${'a.'.repeat(130)}example`,
  ])('refuses %j', (host) => {
    expect(isPlainHost(host)).toBe(false);
  });
});

describe('rate-limit header fields', () => {
  it('write the policy and the state as structured fields, beside X-RateLimit-*', () => {
    expect(rateLimitHeaders({ name: 'signup', limit: 20, windowSeconds: 60 }, { remaining: 19, reset: 42 })).toEqual({
      'RateLimit-Policy': '"signup";q=20;w=60',
      RateLimit: '"signup";r=19;t=42',
      'X-RateLimit-Limit': '20',
      'X-RateLimit-Remaining': '19',
      'X-RateLimit-Reset': '42',
    });
  });

  it('say when the quota counts concurrent requests, and never go below zero', () => {
    expect(rateLimitPolicyField({ name: 'uploads', limit: 2, quotaUnit: 'concurrent-requests' })).toBe(
      '"uploads";q=2;qu="concurrent-requests"',
    );
    expect(rateLimitHeaders({ name: 'x', limit: 1, windowSeconds: 1 }, { remaining: -3, reset: -1 }).RateLimit).toBe(
      '"x";r=0;t=0',
    );
  });
});

describe('conditional requests', () => {
  class CometChangedError extends DomainError {
    constructor() {
      super(PRECONDITION_FAILED, 'The comet has changed.');
    }
  }
  const TAGS: EntityTags = {
    resource: 'comet',
    etag: { description: 'The comet version.', example: ETAG },
    preconditionFailed: { examples: [() => new CometChangedError()] },
  };

  /** The OpenAPI metadata a handler gets from its decorators (applied bottom up, as written). */
  function documented(...decorators: MethodDecorator[]) {
    class Routes {
      handler() {}
    }
    const descriptor = Object.getOwnPropertyDescriptor(Routes.prototype, 'handler')!;
    for (const decorator of decorators.reverse()) decorator(Routes.prototype, 'handler', descriptor);
    const of = <T>(key: string) => Reflect.getMetadata(key, descriptor.value as object) as T;
    return {
      responses: of<Record<string, unknown>>(DECORATORS.API_RESPONSE),
      parameters: of<{ name: string; in: string }[]>(DECORATORS.API_PARAMETERS),
    };
  }

  it('declare on a read If-None-Match, the ETag of its 200 and the 304', () => {
    const { responses, parameters } = documented(ConditionalGet(TAGS), ApiOkResponse({ description: 'The comet.' }));
    expect(parameters).toEqual([
      expect.objectContaining({ name: 'If-None-Match', in: 'header' }),
      expect.objectContaining({ name: 'If-Match', in: 'header' }),
    ]);
    expect(responses['200']).toMatchObject({
      description: 'The comet.',
      headers: { ETag: { description: 'The comet version.' } },
    });
    expect(responses['304']).toMatchObject({ headers: { ETag: { schema: { example: ETAG } } } });
  });

  it('declare on a change If-Match, If-None-Match and the 412, and an ETag only where the answer has a body', () => {
    const put = documented(ConditionalChange(TAGS), ApiOkResponse({ description: 'Changed.' }));
    expect(put.parameters.map((p) => p.name)).toEqual(['If-Match', 'If-None-Match']);
    expect(put.responses['412']).toMatchObject({ description: expect.stringContaining('the comet has changed') });
    expect(put.responses['200']).toMatchObject({ headers: { ETag: expect.anything() } });
    const del = documented(ConditionalChange(TAGS), ApiNoContentResponse({ description: 'Deleted.' }));
    expect(del.responses['204']).toEqual({ description: 'Deleted.' });
  });

  it('go above the success response they tag', () => {
    expect(() => documented(ApiOkResponse({ description: 'The comet.' }), ConditionalGet(TAGS))).toThrow(
      /declare its success response below/,
    );
  });

  function fakeReply(ifNoneMatch?: string, headers: Record<string, string> = {}) {
    const sent: { status?: number; headers: Record<string, string>; body?: unknown } = { headers: {} };
    const reply = {
      request: { headers: { 'if-none-match': ifNoneMatch, ...headers } },
      status: (code: number) => ((sent.status = code), reply),
      header: (name: string, value: string) => ((sent.headers[name] = value), reply),
      type: () => reply,
      serialize: (body: unknown) => JSON.stringify(body),
      send: (body?: unknown) => ((sent.body = body), Promise.resolve(reply)),
    };
    return { reply: reply as unknown as FastifyReply, sent };
  }

  it('answer a read 304 with the ETag a 200 would carry, else 200 with the ETag and the body', async () => {
    const held = fakeReply(`"a", W/${ETAG}`);
    await sendTagged(held.reply, ETAG, { id: 1 });
    expect(held.sent).toEqual({ status: 304, headers: { ETag: ETAG }, body: undefined });
    const fresh = fakeReply('"a"');
    expect(await notModified(fresh.reply, ETAG, { type: 'application/json', size: 8 })).toBe(false);
    await sendTagged(fresh.reply, ETAG, { id: 1 });
    expect(fresh.sent).toEqual({ status: 200, headers: { ETag: ETAG }, body: '{"id":1}' });
  });

  it('answer a 304 only to a coded tag of the coding this request would get, which it carries', async () => {
    const large = { text: 'x'.repeat(2000) };
    const [gzipped, br] = [etagForCoding(ETAG, 'gzip'), etagForCoding(ETAG, 'br')];
    for (const [acceptEncoding, held, status] of [
      ['gzip', `W/${gzipped}`, 304],
      ['gzip', ETAG, 200],
      ['gzip;q=0.5, br', gzipped, 200],
      ['gzip;q=0.5, br', br, 304],
      ['identity', gzipped, 200],
      ['identity', ETAG, 304],
    ]) {
      const reply = fakeReply(String(held), { 'accept-encoding': String(acceptEncoding) });
      await sendTagged(reply.reply, ETAG, large);
      const tag = acceptEncoding === 'gzip' ? gzipped : acceptEncoding === 'identity' ? ETAG : br;
      expect({ acceptEncoding, held, status: reply.sent.status }).toEqual({ acceptEncoding, held, status });
      // The 304 carries the tag of the coding the 200 would get; the 200 is tagged as sent, coded on the way out.
      if (status === 304) expect(reply.sent.headers.ETag).toBe(tag);
    }
    const small = fakeReply(ETAG, { 'accept-encoding': 'gzip' });
    await sendTagged(small.reply, ETAG, { id: 1 });
    expect(small.sent).toEqual({ status: 304, headers: { ETag: ETAG }, body: undefined });
  });

  it('refuse a read whose If-Match fails (412) or is malformed (400), before If-None-Match', async () => {
    await expect(sendTagged(fakeReply(ETAG, { 'if-match': '"other"' }).reply, ETAG, {})).rejects.toMatchObject({
      status: 412,
    });
    await expect(sendTagged(fakeReply(undefined, { 'if-match': `W/${ETAG}` }).reply, ETAG, {})).rejects.toMatchObject({
      status: 412,
    });
    await expect(sendTagged(fakeReply(undefined, { 'if-match': 'junk' }).reply, ETAG, {})).rejects.toMatchObject({
      status: 400,
    });
    const holds = fakeReply(undefined, { 'if-match': `"a", ${ETAG}` });
    await sendTagged(holds.reply, ETAG, { id: 1 });
    expect(holds.sent.status).toBe(200);
  });
});
