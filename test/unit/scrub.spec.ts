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
