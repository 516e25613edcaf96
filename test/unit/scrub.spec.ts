import fc from 'fast-check';

import { looksLikeKey, scrubKeys } from '../../src/common/logging/scrub';
import { generateApiKey } from '../../src/region-keys/api-key-codec';
import { propertyRuns } from '../support/property-runs';

describe('scrubKeys', () => {
  it('blanks every generated key wherever it stands in a text', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        const key = generateApiKey();
        const text = `${before}${key}${after}`;
        expect(looksLikeKey(text)).toBe(true);
        expect(scrubKeys(text)).not.toContain(key.slice(3));
      }),
      propertyRuns(200),
    );
  });

  it('blanks sandbox keys too (rk_test_), keeping only the prefix', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (before, after) => {
        const key = generateApiKey('sandbox');
        const text = `${before}${key}${after}`;
        expect(looksLikeKey(text)).toBe(true);
        expect(scrubKeys(text)).not.toContain(key.slice('rk_test_'.length));
      }),
      propertyRuns(200),
    );
    expect(scrubKeys(`GET /planets/${'rk_test_'}${'a'.repeat(49)}`)).toBe('GET /planets/rk_test_[redacted]');
  });

  it('leaves route paths, UUIDs and request ids alone', () => {
    for (const text of [
      '/auth/region/api-keys/5d7c2f1a-0b6e-4b8e-9a53-5f2a3c1d9e70/roll',
      '/planets/42/image',
      'trace-42',
      'rk_short',
    ]) {
      expect(looksLikeKey(text)).toBe(false);
      expect(scrubKeys(text)).toBe(text);
    }
  });
});

describe('scrubKeys on percent-encoded text', () => {
  const key = 'rk_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789abcdefghijk';
  const body = key.slice(3);

  it('blanks a key whatever characters of it are percent-encoded, in either case of hex, encoded once or more', () => {
    const spellings = [
      `rk%5F${body}`,
      `rk%5f${body}`,
      `%72%6B_${body}`,
      `%72%6b%5f${body}`,
      `rk_%41%62${body.slice(2)}`,
      `rk%255F${body}`,
      [...key].map((char) => `%${char.charCodeAt(0).toString(16)}`).join(''),
    ];
    for (const spelling of spellings) {
      const text = `/auth/region/api-keys/${spelling}/roll`;
      expect(looksLikeKey(text)).toBe(true);
      expect(scrubKeys(text)).toBe('/auth/region/api-keys/rk_[redacted]/roll');
    }
    expect(scrubKeys(`/planets/rk%5Ftest%5f${body}`)).toBe('/planets/rk_test_[redacted]');
  });

  it('leaves other percent-encoded paths alone', () => {
    for (const text of ['/planets/Alpha%20Centauri', '/planets/%zz', '/rk%5Fshort', '/planets/%E2%82%AC']) {
      expect(looksLikeKey(text)).toBe(false);
      expect(scrubKeys(text)).toBe(text);
    }
  });
});
