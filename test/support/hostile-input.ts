import fc from 'fast-check';

/**
 * fast-check generators of what a hostile or broken client sends: odd JSON, bodies of the
 * wrong kind, malformed headers, junk in paths and query strings, broken multipart forms.
 */

/** A distinctive value sent only where secrets go (passwords, keys, tokens, cookies): it must never be logged. */
export const CANARY = /canary-[0-9a-f]{32}/;
export const canary = fc.stringMatching(/^[0-9a-f]{32}$/).map((hex) => `canary-${hex}`);

export const PROTOTYPE_NAMES = [
  'constructor',
  'prototype',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
];

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));

const EDGE_STRINGS = [
  '',
  ' ',
  '   ',
  '\u0000',
  'a\u0000b',
  '\uFEFF',
  '\u202Eevil',
  'zero\u200Bwidth',
  'line\r\nbreak',
  '\t',
  'e\u0301',
  'İ',
  'ß',
  'ﬃ',
  '\u{1F4A9}',
  '\u{10FFFF}',
  '\uFFFF',
  'é'.repeat(40),
  '%00',
  '%',
  '{}',
  '[]',
  'null',
  'true',
  '1e999',
  '-0',
  '0x10',
  'NaN',
  'Infinity',
  '__proto__',
  'constructor',
  "'; DROP TABLE users; --",
  '<script>alert(1)</script>',
  '../../etc/passwd',
  '${7*7}',
  'a@b',
  'user@example.com',
  ' USER@Example.COM ',
  'user@example.com\u0000',
];

/** Strings of every kind: any code point, graphemes, controls, lone surrogates, edge cases, lengths around the limits. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.string({ unit: 'binary-ascii', maxLength: 40 }),
  fc
    .tuple(fc.string({ maxLength: 5 }), loneSurrogate, fc.string({ maxLength: 5 }))
    .map(([before, lone, after]) => before + lone + after),
  fc.constantFrom(...EDGE_STRINGS),
  fc.constantFrom(50, 51, 100, 101, 254, 255, 256, 2000, 2001, 5000).map((n) => 'x'.repeat(n)),
);

export const nastyNumber: fc.Arbitrary<number> = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(
    0,
    -0,
    1,
    -1,
    0.5,
    2 ** 31 - 1,
    2 ** 31,
    2 ** 53 - 1,
    2 ** 53 + 2,
    -(2 ** 53),
    1e21,
    1e308,
    -1e308,
    5e-324,
  ),
);

const nastyScalar = fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null));

/** Field names: the route's own, names like Object.prototype members, and anything else. */
export function fieldNames(own: string[], { prototypeNames = true } = {}): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: own.length > 0 ? fc.constantFrom(...own) : fc.string({ maxLength: 8 }), weight: 4 },
    { arbitrary: fc.constantFrom(...(prototypeNames ? PROTOTYPE_NAMES : ['prototype'])), weight: 1 },
    {
      arbitrary: fc.oneof(
        fc.string({ unit: 'binary', maxLength: 12 }),
        fc.constantFrom('', ' ', 'a.b', 'a[0]', '$where', 'id', 'creator', 'key'),
      ),
      weight: 1,
    },
  );
}

/** Any JSON value, nested a few levels, with these field names. */
export function nastyJson(keys: fc.Arbitrary<string>): fc.Arbitrary<unknown> {
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { maxDepth: 3, depthIdentifier: 'nasty-json' },
      nastyScalar,
      fc.array(tie('value'), { maxLength: 4 }),
      fc.dictionary(keys, tie('value'), { maxKeys: 4 }),
    ),
  }));
  return value;
}

const MAX_NESTING = 5000;

/** JSON text nested up to MAX_NESTING levels (arrays or objects). */
export const deeplyNestedJson: fc.Arbitrary<string> = fc
  .tuple(fc.noBias(fc.integer({ min: 1, max: MAX_NESTING })), fc.boolean())
  .map(([depth, arrays]) =>
    arrays ? '['.repeat(depth) + ']'.repeat(depth) : '{"a":'.repeat(depth) + '1' + '}'.repeat(depth),
  );

/** JSON texts that JSON.stringify cannot make, and texts that are almost JSON. */
export function rawJsonTexts(field: string): fc.Arbitrary<string> {
  const f = JSON.stringify(field);
  return fc.oneof(
    fc.constantFrom(
      `{${f}:1e999}`,
      `{${f}:-1e999}`,
      `{${f}:123456789012345678901234567890}`,
      `{${f}:0.${'0'.repeat(400)}1}`,
      `{${f}:01}`,
      `{${f}:"\\ud800"}`,
      `{${f}:"\\udc00x"}`,
      `{${f}:"\\u0000"}`,
      `{${f}:"a",${f}:"b"}`,
      `{${f}:1,}`,
      `{'${field}':1}`,
      `\uFEFF{${f}:"x"}`,
      `{${f}:"x"}{}`,
      `{${f}:"x"`,
      '{"__proto__":{"isAdmin":true}}',
      '{"constructor":{"prototype":{"isAdmin":true}}}',
      '',
      ' ',
      'null',
      'true',
      '1',
      '"text"',
      '[]',
      '[{}]',
      '{',
      '\u0000',
    ),
    deeplyNestedJson,
    deeplyNestedJson.map((nested) => `{${f}:${nested}}`),
  );
}

/** Characters a header value can carry over HTTP/1.1: visible ASCII, space, tab and obs-text. */
const headerChar = fc.oneof(
  fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
  fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
  fc.constant('\t'),
);
export const headerText = (maxLength = 60) => fc.string({ unit: headerChar, maxLength });

export const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'Application/JSON',
  'application/json; charset=utf-16',
  'application/json; charset="utf-8"',
  'application/json;',
  'application/json, text/plain',
  'application/problem+json',
  'application/merge-patch+json',
  'application/merge-patch+json; charset=utf-16',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'text/json',
  'multipart/form-data',
  'multipart/form-data; boundary=',
  'multipart/form-data; boundary=abc',
  'multipart/mixed; boundary=abc',
  'application/octet-stream',
  'image/png',
  '*/*',
  ';',
  '',
];
export const contentType = fc.oneof(
  { arbitrary: fc.constantFrom(...CONTENT_TYPES), weight: 5 },
  { arbitrary: headerText(40), weight: 1 },
);

const percentEncodedBytes = fc
  .uint8Array({ minLength: 1, maxLength: 12 })
  .map((bytes) => [...bytes].map((b) => `%${b.toString(16).padStart(2, '0')}`).join(''));

/** A path segment: valid ids, near-misses, encoded junk, very long ones. */
export function pathSegment(valid: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...valid), weight: 6 },
    {
      arbitrary: fc.constantFrom(
        '0',
        '-1',
        '01',
        '1.5',
        '1e3',
        '0x1',
        '+1',
        '%201',
        '1%20',
        '2147483647',
        '2147483648',
        '99999999999999999999',
        'NaN',
        'Infinity',
        'null',
        'undefined',
        '__proto__',
        'constructor',
        '%2e%2e',
        '%2F',
        '%00',
        '%zz',
        '%',
        '%E2%98%83',
        '%ED%A0%80',
        '%C0%AF',
        '%FF',
        ';x=1',
      ),
      weight: 3,
    },
    { arbitrary: fc.uuid(), weight: 1 },
    { arbitrary: fc.uuid().map((u) => u.toUpperCase()), weight: 1 },
    { arbitrary: fc.uuid().map((u) => u.replace(/-/g, '')), weight: 1 },
    { arbitrary: fc.uuid().map((u) => `{${u}}`), weight: 1 },
    { arbitrary: percentEncodedBytes, weight: 2 },
    { arbitrary: fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{1,40}$/), weight: 2 },
    { arbitrary: fc.constantFrom(999, 1000, 1001, 3000).map((n) => '1'.repeat(n)), weight: 1 },
  );
}

/** A query string: repeated, bracketed, encoded and prototype-named parameters. */
export function queryString(own: string[]): fc.Arbitrary<string> {
  const key = fc.oneof(
    { arbitrary: fc.constantFrom(...own, ...own.flatMap((k) => [`${k}[]`, `${k}[0]`, `${k}[a]`])), weight: 4 },
    {
      arbitrary: fc.constantFrom(
        'a',
        'token',
        'api_key',
        '__proto__',
        '__proto__[x]',
        'constructor[prototype][x]',
        '',
        '%00',
        '%6c%69%6d%69%74',
        ...PROTOTYPE_NAMES,
      ),
      weight: 2,
    },
    { arbitrary: percentEncodedBytes, weight: 1 },
  );
  const value = fc.oneof(
    {
      arbitrary: fc.constantFrom(
        '',
        '1',
        '0',
        '-1',
        '10',
        '100',
        '101',
        '1.5',
        '1e2',
        '0x10',
        '+1',
        '%201',
        '99999999999999999',
        '2147483648',
        'NaN',
        'null',
        '[]',
        '%00',
        '%ED%A0%80',
        '%zz',
        '%',
      ),
      weight: 4,
    },
    { arbitrary: percentEncodedBytes, weight: 1 },
    { arbitrary: canary, weight: 1 },
  );
  return fc
    .array(fc.tuple(key, value, fc.boolean()), { maxLength: 6 })
    .map((pairs) => pairs.map(([k, v, withValue]) => (withValue ? `${k}=${v}` : k)).join('&'));
}

/** A multipart/form-data body, well formed or broken in one of many ways. */
export interface MultipartSpec {
  boundary: string;
  declared: 'same' | 'other' | 'missing' | 'quoted';
  parts: { name: string; filename?: string; type?: string; headers: string[]; content: Buffer }[];
  ending: 'proper' | 'missing' | 'truncated' | 'no-crlf' | 'garbage-after' | 'preamble';
}

export function multipartBody(images: Buffer[]): fc.Arbitrary<{ contentType: string; payload: Buffer }> {
  const content = fc.oneof(
    fc.constantFrom(...images),
    fc
      .constantFrom(...images)
      .chain((image) => fc.integer({ min: 0, max: image.length - 1 }).map((n) => image.subarray(0, n))),
    fc
      .uint8Array({ maxLength: 300 })
      .map((bytes) => Buffer.concat([Buffer.from('\x89PNG\r\n\x1a\n', 'latin1'), Buffer.from(bytes)])),
    fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
    fc.constantFrom(
      Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      Buffer.from('--boundary--\r\n'),
      Buffer.alloc(0),
    ),
  );
  const part = fc.record({
    name: fc.oneof(
      fc.constantFrom('image', 'image', 'IMAGE', 'image[]', '', 'image"', 'file', ...PROTOTYPE_NAMES.slice(0, 2)),
      headerText(20),
    ),
    filename: fc.option(
      fc.oneof(
        fc.constantFrom('mars.png', '../../../etc/passwd', '', 'x\u0000.png', 'C:\\x.png', 'a'.repeat(300)),
        headerText(30),
      ),
      { nil: undefined },
    ),
    type: fc.option(fc.constantFrom('image/png', 'image/jpeg', 'text/plain', 'application/json', 'image/svg+xml', ''), {
      nil: undefined,
    }),
    headers: fc.array(
      fc.constantFrom(
        'Content-Transfer-Encoding: base64',
        'X-Extra: 1',
        'NoColonHeader',
        'Content-Type:',
        `X-Long: ${'h'.repeat(9000)}`,
      ),
      { maxLength: 2 },
    ),
    content,
  });
  const spec: fc.Arbitrary<MultipartSpec> = fc.record({
    boundary: fc.oneof(
      fc.constantFrom('x', '----b', 'a'.repeat(70), 'a'.repeat(200), 'b o u n d', 'é'),
      fc.stringMatching(/^[A-Za-z0-9'()+_,./:=?-]{1,70}$/),
    ),
    declared: fc.constantFrom('same', 'same', 'other', 'missing', 'quoted'),
    parts: fc.array(part, { maxLength: 3 }),
    ending: fc.constantFrom('proper', 'proper', 'missing', 'truncated', 'no-crlf', 'garbage-after', 'preamble'),
  });
  // Now and then a well-formed upload, so that the route's success is reached too.
  const wellFormed = fc.record({
    boundary: fc.stringMatching(/^[A-Za-z0-9-]{1,40}$/),
    declared: fc.constant('same' as const),
    parts: fc
      .tuple(part, fc.constantFrom(...images))
      .map(([p, image]) => [{ ...p, name: 'image', filename: 'planet', headers: [], content: image }]),
    ending: fc.constant('proper' as const),
  });
  return fc.oneof({ arbitrary: spec, weight: 3 }, { arbitrary: wellFormed, weight: 1 }).map(buildMultipart);
}

function buildMultipart({ boundary, declared, parts, ending }: MultipartSpec): {
  contentType: string;
  payload: Buffer;
} {
  const chunks: Buffer[] = [];
  if (ending === 'preamble') chunks.push(Buffer.from('preamble text\r\n'));
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    const headers = [
      `Content-Disposition: ${disposition}`,
      ...(part.type === undefined ? [] : [`Content-Type: ${part.type}`]),
      ...part.headers,
    ];
    chunks.push(
      Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`, 'latin1'),
      part.content,
      Buffer.from('\r\n'),
    );
  }
  if (ending !== 'missing') chunks.push(Buffer.from(ending === 'no-crlf' ? `--${boundary}--` : `--${boundary}--\r\n`));
  if (ending === 'garbage-after') chunks.push(Buffer.from('trailing garbage'));
  let payload = Buffer.concat(chunks);
  if (ending === 'truncated') payload = payload.subarray(0, Math.floor(payload.length / 2));
  const param = {
    same: `; boundary=${boundary}`,
    other: '; boundary=something-else',
    missing: '',
    quoted: `; boundary="${boundary}"`,
  }[declared];
  return { contentType: `multipart/form-data${param}`, payload };
}
