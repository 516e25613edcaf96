import { generateApiKey, hashApiKey, isWellFormedApiKey, previewApiKey } from '../../src/region-keys/api-key-codec';

describe('api key codec', () => {
  it('generates rk_ keys of 43 random and 6 checksum base62 characters', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^rk_[0-9A-Za-z]{49}$/);
    expect(isWellFormedApiKey(key)).toBe(true);
  });

  it('never repeats a key', () => {
    const keys = new Set(Array.from({ length: 1000 }, generateApiKey));
    expect(keys.size).toBe(1000);
  });

  it('rejects a key whose checksum does not match, whichever character changed', () => {
    const key = generateApiKey();
    for (const position of [3, 20, key.length - 7, key.length - 1]) {
      const ch = key[position] === 'a' ? 'b' : 'a';
      const broken = key.slice(0, position) + ch + key.slice(position + 1);
      expect(isWellFormedApiKey(broken)).toBe(false);
    }
  });

  it.each([
    ['empty', ''],
    ['too short rk_ key', 'rk_abc'],
    ['rk_ key with a symbol', `rk_${'a'.repeat(48)}!`],
    ['short operator key', 'short-key'],
    ['operator key with a space', `${'a'.repeat(20)} ${'b'.repeat(20)}`],
    ['non-ASCII', 'é'.repeat(40)],
  ])('rejects a malformed key (%s)', (_label, key) => {
    expect(isWellFormedApiKey(key)).toBe(false);
  });

  it('accepts an operator-chosen key of 32+ printable characters', () => {
    expect(isWellFormedApiKey('operator-chosen-initial-key-0123456789abcdef')).toBe(true);
  });

  it('hashes with SHA-256 (hex) and previews first 8 … last 4', () => {
    expect(hashApiKey('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(previewApiKey('rk_ABCDEFGHIJKLMNOP')).toBe('rk_ABCDE\u2026MNOP');
  });
});
