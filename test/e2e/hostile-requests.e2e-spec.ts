import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { gzipSync } from 'node:zlib';

import type { Response } from 'light-my-request';

import { MAX_JSON_DEPTH } from '../../src/common/validation/json-shape';
import { expectProblem } from '../support/problems';
import { newRegion, startTestApp, TestApp } from '../support/test-app';
import { basicHeader, newUser, UserFixture } from '../support/users';

// Requests that broke the service's promises one at a time: a stack overflow, names the
// validator could not see, credentials cut at the wrong colon, text that hides itself.

let t: TestApp;
let alice: UserFixture;

beforeAll(async () => {
  t = await startTestApp();
  alice = await newUser(t);
});
afterAll(async () => t?.close());

const fieldsOf = (res: Response): string[] => (res.json().errors ?? []).map((e: { field: string }) => e.field);

/** A JSON text nested `depth` levels deep, as a string (JSON.stringify would recurse too). */
const nestedArrays = (depth: number) => `${'['.repeat(depth)}1${']'.repeat(depth)}`;
const nestedObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('deeply nested JSON', () => {
  const post = (url: string, field: string, nested: string, headers: Record<string, string> = {}) =>
    t.request({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...headers },
      payload: `{"email":"ann@example.com","password":"password-1","${field}":${nested}}`,
    });

  it.each([
    ['arrays', nestedArrays(2000)],
    ['objects', nestedObjects(2000)],
    ['arrays, as deep as 64 KiB allows', nestedArrays(32000)],
  ])('is a 400 naming the field, not a stack overflow, for %s on a public route', async (_, nested) => {
    for (const url of ['/user/signup', '/auth/token']) {
      const res = await post(url, 'name', nested);
      const body = expectProblem(res, 400, 'validation');
      expect(body.errors).toEqual([
        { field: 'name', message: `name is nested more than ${MAX_JSON_DEPTH} levels deep` },
      ]);
    }
  });

  it('is a 400 on an authenticated route too', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/planets',
      headers: { 'content-type': 'application/json', authorization: alice.basic },
      payload: `{"name":"Deep","physicalProperties":${nestedObjects(3000)}}`,
    });
    expectProblem(res, 400, 'validation');
    expect(fieldsOf(res)).toEqual(['physicalProperties']);
  });

  it(`accepts the deepest body a route declares, far below ${MAX_JSON_DEPTH} levels`, async () => {
    const res = await t.request({
      method: 'POST',
      url: '/planets',
      headers: { authorization: alice.basic },
      payload: { name: 'Shallow', physicalProperties: { temperature: { min: 1, max: 2 } } },
    });
    expect(res.statusCode).toBe(201);
  });
});

// Names every object inherits: class-transformer skips them when it builds the DTO, so the
// unknown-field check never saw them and they were dropped without a word.
const PROTOTYPE_NAMES = [
  'toString',
  'valueOf',
  'constructor',
  'hasOwnProperty',
  'isPrototypeOf',
  'toLocaleString',
  '__defineGetter__',
];

describe('unknown fields named like Object.prototype members', () => {
  it.each(PROTOTYPE_NAMES)('%s in a body is a 400 naming it, like any unknown field', async (name) => {
    const res = await t.request({
      method: 'POST',
      url: '/user/signup',
      headers: { 'content-type': 'application/json' },
      payload: `{"email":"proto-${name.toLowerCase()}@example.com","password":"password-1","${name}":"x"}`,
    });
    expectProblem(res, 400, 'validation');
    expect(res.json().errors).toEqual([{ field: name, message: `property ${name} should not exist` }]);
  });

  it.each(PROTOTYPE_NAMES)('%s nested in a body is a 400 naming its path', async (name) => {
    const res = await t.request({
      method: 'POST',
      url: '/planets',
      headers: { 'content-type': 'application/json', authorization: alice.basic },
      payload: `{"name":"Proto","physicalProperties":{"mass":1,"${name}":1}}`,
    });
    expectProblem(res, 400, 'validation');
    expect(fieldsOf(res)).toEqual([`physicalProperties.${name}`]);
  });

  it.each([...PROTOTYPE_NAMES, '__proto__'])('%s in a query string is a 400 naming it', async (name) => {
    const res = await t.request({ method: 'GET', url: `/planets?limit=5&${name}=1` });
    expectProblem(res, 400, 'validation');
    expect(fieldsOf(res)).toEqual([name]);
  });

  it('__proto__ in a body is a 400 problem', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/user/signup',
      headers: { 'content-type': 'application/json' },
      payload: '{"email":"proto@example.com","password":"password-1","__proto__":{"admin":true}}',
    });
    expectProblem(res, 400);
  });

  it('nothing of such a body is stored', async () => {
    const email = 'kept-out@example.com';
    const res = await t.request({
      method: 'POST',
      url: '/user/signup',
      payload: { email, password: 'password-1', valueOf: 1 },
    });
    expect(res.statusCode).toBe(400);
    expect(
      (await t.request({ method: 'POST', url: '/auth/token', payload: { email, password: 'password-1' } })).statusCode,
    ).toBe(401);
  });
});

describe('Basic credentials split at the first colon (RFC 7617)', () => {
  it.each([
    ['begins with a colon', ':starts-with-colon'],
    ['is colons only', '::::::::'],
    ['contains colons', 'a:b:c:d:e:f'],
    ['ends with a colon', 'ends-with-colon:'],
  ])('a password that %s works with Basic as with POST /auth/token', async (_, password) => {
    const user = await newUser(t, { password });
    const me = await t.request({
      method: 'GET',
      url: '/me',
      headers: { authorization: basicHeader(user.email, password) },
    });
    expect(me.statusCode).toBe(200);
    expect(me.json().id).toBe(user.id);
    // The same password with the first colon's other side cut off is wrong.
    const cut = password.slice(password.indexOf(':') + 1) || 'x';
    const wrong = await t.request({
      method: 'GET',
      url: '/me',
      headers: { authorization: basicHeader(user.email, cut) },
    });
    expect(wrong.statusCode).toBe(401);
  });

  it('still refuses headers that are not exact Basic credentials', async () => {
    for (const authorization of [
      'Basic',
      'Basic !!!!',
      `Basic ${Buffer.from('no-colon').toString('base64')}`,
      `Basic ${Buffer.from(':pw-without-email').toString('base64')}`,
    ]) {
      const res = await t.request({ method: 'GET', url: '/me', headers: { authorization } });
      expectProblem(res, 401, 'unauthenticated');
      expect(res.headers['www-authenticate']).toContain('Basic');
    }
  });
});

// Characters that change how text looks without being seen: a name shown in a log or a
// list can hide another line (CR/LF), reverse what follows it (bidi overrides), or look
// like another name (zero-width characters).
const HIDDEN = [
  ['a line feed', 'Mars\nAdmin: yes'],
  ['a carriage return', 'Mars\rX'],
  ['a tab', 'Mars\tX'],
  ['an escape (C0 control)', 'Mars\u001b[31m'],
  ['a C1 control', 'Mars\u0085X'],
  ['DEL', 'Mars\u007f'],
  ['a right-to-left override', 'Mars\u202Egnp.exe'],
  ['a left-to-right isolate', 'Mars\u2066X\u2069'],
  ['a right-to-left mark', 'Mars\u200F'],
  ['a zero-width space', 'Ma\u200Brs'],
  ['a word joiner', 'Ma\u2060rs'],
  ['a byte order mark', 'Ma\uFEFFrs'],
  ['a line separator', 'Mars\u2028X'],
  ['a soft hyphen', 'Ma\u00ADrs'],
  ['a combining grapheme joiner', 'Ma\u034Frs'],
  ['a Hangul filler', 'Mars\u3164'],
  ['a Mongolian vowel separator', 'Ma\u180Ers'],
  ['an interlinear annotation anchor', 'Mars\uFFF9X'],
  ['a musical invisible mark', 'Mars\u{1D173}'],
  ['tag characters (hidden text)', 'Mars\u{E0001}\u{E0041}'],
] as const;

describe('JSON bodies that are not UTF-8', () => {
  const withBytes = (json: string, marker: string, bytes: number[]) => {
    const [before, after] = json.split(marker);
    return Buffer.concat([Buffer.from(before), Buffer.from(bytes), Buffer.from(after)]);
  };

  it.each([
    ['a sign-up name ending in FF FE', '/user/signup', [0xff, 0xfe]],
    ['a planet name with C0 AF FF', '/planets', [0xc0, 0xaf, 0xff]],
    ['a name with a surrogate encoded in UTF-8 (ED A0 80)', '/planets', [0xed, 0xa0, 0x80]],
  ])('are refused, %s, as malformed JSON naming the body, and nothing is stored', async (_, url, bytes) => {
    const email = `bytes-${Date.now()}@example.com`;
    const json = JSON.stringify({
      name: 'Name MARK',
      ...(url === '/user/signup' ? { email, password: 'password-1' } : {}),
    });
    const res = await t.request({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/json', ...(url === '/planets' ? { authorization: alice.basic } : {}) },
      payload: withBytes(json, 'MARK', bytes),
    });
    expectProblem(res, 400, 'malformed-json');
    expect(res.json().errors).toEqual([{ field: 'body', message: expect.stringMatching(/UTF-8/) }]);
    if (url === '/user/signup') {
      const signIn = await t.request({
        method: 'POST',
        url: '/auth/token',
        payload: { email, password: 'password-1' },
      });
      expect(signIn.statusCode).toBe(401);
    }
  });

  it.each(['utf-16', 'latin1', 'ISO-8859-1', '"windows-1252"'])(
    'refuses a JSON body declared as charset=%s with a 415 problem, and takes utf-8 however it is written',
    async (charset) => {
      const send = (contentType: string) =>
        t.request({
          method: 'POST',
          url: '/planets',
          headers: { 'content-type': contentType, authorization: alice.basic },
          payload: JSON.stringify({ name: 'Declared' }),
        });
      expect(expectProblem(await send(`application/json; charset=${charset}`), 415).detail).toMatch(/UTF-8/);
      expect((await send('application/json; charset=UTF-8')).statusCode).toBe(201);
      expect((await send('application/json;charset="utf-8"')).statusCode).toBe(201);
    },
  );

  it('still takes every valid UTF-8 text, a byte order mark and four-byte characters included', async () => {
    const res = await t.request({
      method: 'POST',
      url: '/planets',
      headers: { 'content-type': 'application/json', authorization: alice.basic },
      payload: Buffer.from(`\uFEFF${JSON.stringify({ name: 'Ærø 火星 🪐' })}`),
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().name).toBe('Ærø 火星 🪐');
  });
});

describe('request bodies and their media types', () => {
  it.each(['gzip', 'br', 'deflate, gzip'])(
    'refuses a body sent with Content-Encoding %s with a 415 naming it and Accept-Encoding: identity, compressed or not; nothing is stored',
    async (coding) => {
      const json = JSON.stringify({ name: `Encoded ${coding}` });
      for (const payload of [gzipSync(json), Buffer.from(json)]) {
        const res = await t.request({
          method: 'POST',
          url: '/planets',
          headers: { 'content-type': 'application/json', 'content-encoding': coding, authorization: alice.basic },
          payload,
        });
        expect(expectProblem(res, 415).detail).toContain(`Content-Encoding "${coding}"`);
        expect(res.headers['accept-encoding']).toBe('identity');
      }
      const stored = await t.request({ method: 'GET', url: '/planets?limit=100' });
      expect(stored.json().data.map((planet: { name: string }) => planet.name)).not.toContain(`Encoded ${coding}`);
      // identity is no coding at all; a GET's coding names no body.
      const plain = await t.request({
        method: 'POST',
        url: '/planets',
        headers: { 'content-type': 'application/json', 'content-encoding': 'identity', authorization: alice.basic },
        payload: json,
      });
      expect(plain.statusCode).toBe(201);
      expect(
        (await t.request({ method: 'GET', url: '/planets', headers: { 'content-encoding': coding } })).statusCode,
      ).toBe(200);
    },
  );

  it.each([
    ['text/plain', 'description=x'],
    [
      'multipart/form-data; boundary=x',
      '--x\r\nContent-Disposition: form-data; name="description"\r\n\r\ny\r\n--x--\r\n',
    ],
  ])('tells a PATCH that takes a merge patch both of its types in its 415, for a %s body', async (type, payload) => {
    const region = await newRegion(t);
    const res = await t.request({
      method: 'PATCH',
      url: `/auth/region/api-keys/${region.keyId}`,
      headers: { 'content-type': type, 'x-api-key': region.key },
      payload,
    });
    expect(expectProblem(res, 415).detail).toBe('Send the body as application/json or application/merge-patch+json.');
  });
});

describe('names and descriptions are plain text', () => {
  it.each(HIDDEN)('a planet name or description with %s is a 400 naming the field', async (_, text) => {
    for (const field of ['name', 'description']) {
      const res = await t.request({
        method: 'POST',
        url: '/planets',
        headers: { authorization: alice.basic },
        payload: { name: 'Mars', [field]: text },
      });
      expectProblem(res, 400, 'validation');
      expect(fieldsOf(res)).toEqual([field]);
    }
  });

  it.each(HIDDEN)('a user name, a key description, a satellite name and tags with %s are refused', async (_, text) => {
    const region = await newRegion(t);
    const cases: [Promise<Response>, string][] = [
      [
        t.request({
          method: 'POST',
          url: '/user/signup',
          payload: { name: text, email: 'hidden@example.com', password: 'password-1' },
        }),
        'name',
      ],
      [
        t.request({
          method: 'POST',
          url: '/auth/region/api-keys',
          headers: { 'x-api-key': region.key },
          payload: { description: text },
        }),
        'description',
      ],
      [
        t.request({
          method: 'POST',
          url: '/celestial-bodies',
          headers: { authorization: alice.basic },
          payload: { name: text, type: 'moon', orbit: { planet: { id: 1 } } },
        }),
        'name',
      ],
      [
        t.request({
          method: 'POST',
          url: '/planets',
          headers: { authorization: alice.basic },
          payload: { name: 'Mars', tags: ['ok', text] },
        }),
        'tags',
      ],
    ];
    for (const [pending, field] of cases) {
      const res = await pending;
      expectProblem(res, 400, 'validation');
      expect(fieldsOf(res)).toEqual([field]);
    }
  });

  it('keeps text in any script, with emoji, joiners inside words, and accents', async () => {
    for (const name of ['Ἀφροδίτη', 'کره\u200Cی ماه', 'ग्रह', '👩\u200D🚀 crew', 'Ꮎ Cherokee', 'Zoë – “quoted”']) {
      const res = await t.request({
        method: 'POST',
        url: '/planets',
        headers: { authorization: alice.basic },
        payload: { name, description: name },
      });
      expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 201 });
      expect(res.json()).toMatchObject({ name, description: name });
    }
  });
});

describe('a client that closes the connection mid-body', () => {
  it('is logged once, at info, as a client abort: never as a database fault or an error', async () => {
    await t.app.listen(0, '127.0.0.1');
    const { port } = t.app.getHttpServer().address() as AddressInfo;
    const firstLog = t.logs.length;
    const socket = connect(port, '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    socket.write(
      `POST /planets HTTP/1.1\r\nHost: localhost\r\nAuthorization: ${alice.basic}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"name":"Half`,
    );
    // Long enough for the server to be reading the body when the connection drops.
    await new Promise((resolve) => setTimeout(resolve, 300));
    socket.destroy();
    const aborted = () => t.logs.slice(firstLog).filter((line) => line.includes('Request aborted by the client'));
    const deadline = Date.now() + 5000;
    while (aborted().length === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
    // Then a while for any later line about the same request.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const logs = t.logs.slice(firstLog);
    expect(aborted()).toEqual([expect.stringMatching(/"level":30,.*"requestId":"[^"]+"/)]);
    expect(logs.filter((line) => /Database fault/i.test(line))).toEqual([]);
    expect(logs.filter((line) => /"level":(40|50|60)/.test(line))).toEqual([]);
  });
});
