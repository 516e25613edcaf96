import {
  generateApiKey,
  generatedKeyEnvironment,
  hashApiKey,
  isWellFormedApiKey,
  previewApiKey,
} from '../../src/region-keys/api-key-codec';

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

describe('api key format per environment', () => {
  it('generates rk_test_ keys for a sandbox, of the same random and checksum parts', () => {
    const key = generateApiKey('sandbox');
    expect(key).toMatch(/^rk_test_[0-9A-Za-z]{49}$/);
    expect(isWellFormedApiKey(key, 'sandbox')).toBe(true);
    expect(generatedKeyEnvironment(key)).toBe('sandbox');
    expect(generatedKeyEnvironment(generateApiKey('live'))).toBe('live');
    expect(generateApiKey()).toMatch(/^rk_[0-9A-Za-z]{49}$/);
  });

  it('checks the checksum over the whole key, prefix included', () => {
    const key = generateApiKey('sandbox');
    // The same random part and checksum under the live prefix: its checksum no longer matches.
    const relabelled = `rk_${key.slice('rk_test_'.length)}`;
    expect(isWellFormedApiKey(relabelled, 'live')).toBe(false);
    expect(generatedKeyEnvironment(relabelled)).toBeNull();
    for (const position of [3, 7, 8, key.length - 1]) {
      const ch = key[position] === 'a' ? 'b' : 'a';
      expect(isWellFormedApiKey(key.slice(0, position) + ch + key.slice(position + 1), 'sandbox')).toBe(false);
    }
  });

  it('takes no live key in a sandbox and no sandbox key in live, and says which environment each is for', () => {
    const live = generateApiKey('live');
    const sandbox = generateApiKey('sandbox');
    expect(isWellFormedApiKey(live, 'sandbox')).toBe(false);
    expect(isWellFormedApiKey(sandbox, 'live')).toBe(false);
    expect(isWellFormedApiKey(sandbox)).toBe(false);
    expect([generatedKeyEnvironment(live), generatedKeyEnvironment(sandbox)]).toEqual(['live', 'sandbox']);
  });

  it('names no environment for a made-up or an operator-chosen key, which is valid in both', () => {
    expect(generatedKeyEnvironment(`rk_test_${'a'.repeat(49)}`)).toBeNull();
    expect(generatedKeyEnvironment('operator-chosen-initial-key-0123456789abcdef')).toBeNull();
    for (const environment of ['live', 'sandbox'] as const) {
      expect(isWellFormedApiKey('operator-chosen-initial-key-0123456789abcdef', environment)).toBe(true);
    }
  });

  it('previews a sandbox key by its whole prefix and last 4', () => {
    const key = generateApiKey('sandbox');
    expect(previewApiKey(key)).toBe(`rk_test_\u2026${key.slice(-4)}`);
  });
});
