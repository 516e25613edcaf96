import { loadConfig, loadSettings } from '../../src/config/app-config';
import { ConfigValidationError } from '../../src/config/settings';
import { generateApiKey, isWellFormedApiKey } from '../../src/region-keys/api-key-codec';
import { RegionKeysSettings } from '../../src/region-keys/region-keys.settings';
import { expectRefused } from '../support/settings';

// A production environment names its database (DATABASE_URL): these tests are about the rest.
const load = (env: NodeJS.ProcessEnv) => loadSettings(RegionKeysSettings, { DATABASE_URL: 'embedded', ...env });

describe('RegionKeysSettings', () => {
  it('applies the documented defaults, and converts numbers from strings', () => {
    const settings = load({});
    expect(settings.MAX_API_KEYS_PER_REGION).toBe(100);
    expect(settings.initialRegionName).toBe('Default region');
    expect(load({ MAX_API_KEYS_PER_REGION: '5' }).MAX_API_KEYS_PER_REGION).toBe(5);
  });

  describe('REGION_KEY_RATE_LIMIT', () => {
    it("is 600 requests a minute by default, and takes <requests>/<seconds> within the bounds of a key's own", () => {
      expect(load({}).regionKeyRateLimit).toEqual({ requests: 600, perSeconds: 60 });
      expect(load({ REGION_KEY_RATE_LIMIT: '100000/1' }).regionKeyRateLimit).toEqual({
        requests: 100000,
        perSeconds: 1,
      });
      expect(load({ REGION_KEY_RATE_LIMIT: '1/3600' }).regionKeyRateLimit).toEqual({ requests: 1, perSeconds: 3600 });
    });

    it.each([
      '600',
      '600/',
      '/60',
      '600 / 60',
      '600/60s',
      '0/60',
      '100001/60',
      '600/0',
      '600/3601',
      '1.5/60',
      '-1/60',
      'x',
    ])('refuses %j, naming the variable and the form', (value) => {
      expectRefused(load, 'REGION_KEY_RATE_LIMIT', value);
      expect(() => load({ REGION_KEY_RATE_LIMIT: value })).toThrow(/must be <requests>\/<seconds>, such as 600\/60/);
    });
  });

  it.each([
    ['INITIAL_REGION_API_KEY', 'too-short'],
    ['MAX_API_KEYS_PER_REGION', '0'],
    ['INITIAL_REGION_NAME', 'Utrecht\nForged line'],
    ['INITIAL_REGION_NAME', 'Utrecht \u001b[31mred'],
    ['INITIAL_REGION_NAME', 'Utrecht \u202Eevil'],
  ])('refuses a bad %s and names it', (name, value) => {
    expectRefused(load, name, value);
  });

  describe('INITIAL_REGION_API_KEY', () => {
    // The shape of a generated key, but a checksum that does not match: every request with it would be a 401.
    const madeUp = `rk_${'a'.repeat(49)}`;

    it('refuses an rk_ value that is not a generated key, naming the variable and how to make one', () => {
      expect(isWellFormedApiKey(madeUp)).toBe(false);
      for (const value of [madeUp, `rk_operator-chosen-initial-key-0123456789`, `${generateApiKey()}x`]) {
        expect(() => load({ INITIAL_REGION_API_KEY: value })).toThrow(ConfigValidationError);
        expect(() => load({ INITIAL_REGION_API_KEY: value })).toThrow(
          /^Invalid configuration:\n {2}- INITIAL_REGION_API_KEY=\(hidden\): .*not a generated key.*cli -- key generate/,
        );
        expect(() => load({ INITIAL_REGION_API_KEY: value })).not.toThrow(value);
      }
    });

    it('takes a generated key, and any other value of 32+ printable characters, as they authenticate', () => {
      for (const value of [generateApiKey(), 'operator-chosen-initial-key-0123456789abcdef', `RK_${'a'.repeat(49)}`]) {
        expect(isWellFormedApiKey(value)).toBe(true);
        expect(load({ INITIAL_REGION_API_KEY: value }).INITIAL_REGION_API_KEY).toBe(value);
      }
    });

    it('does not echo the value in the error', () => {
      expect(() => load({ INITIAL_REGION_API_KEY: 'secret-but-short' })).toThrow(/INITIAL_REGION_API_KEY=\(hidden\)/);
      expect(() => load({ INITIAL_REGION_API_KEY: 'secret-but-short' })).not.toThrow(/secret-but-short/);
    });

    it('refuses a sandbox key on a live instance, and a live key in a sandbox, naming the variable', () => {
      expect(() => load({ INITIAL_REGION_API_KEY: generateApiKey('sandbox') })).toThrow(
        /INITIAL_REGION_API_KEY=\(hidden\): .*is a sandbox key \(rk_test_\) but API_ENVIRONMENT is live/,
      );
      expect(() => load({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: generateApiKey('live') })).toThrow(
        /INITIAL_REGION_API_KEY=\(hidden\): .*is a live key \(rk_\) but API_ENVIRONMENT is sandbox/,
      );
      const sandboxKey = generateApiKey('sandbox');
      expect(load({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: sandboxKey }).INITIAL_REGION_API_KEY).toBe(
        sandboxKey,
      );
      const operatorKey = 'operator-chosen-initial-key-0123456789abcdef';
      expect(load({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: operatorKey }).INITIAL_REGION_API_KEY).toBe(
        operatorKey,
      );
      // A made-up rk_test_ value is no generated key in either environment.
      expect(() => load({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: `rk_test_${'a'.repeat(49)}` })).toThrow(
        /not a generated key/,
      );
    });

    it('is checked against the API_ENVIRONMENT of the AppConfig it is read with', () => {
      const sandbox = loadConfig({ API_ENVIRONMENT: 'sandbox' });
      const key = generateApiKey('sandbox');
      expect(loadSettings(RegionKeysSettings, { INITIAL_REGION_API_KEY: key }, sandbox).INITIAL_REGION_API_KEY).toBe(
        key,
      );
    });
  });

  describe('API_KEY_USAGE_FLUSH_INTERVAL_MS', () => {
    it('writes usage once a minute by default', () => {
      expect(load({}).API_KEY_USAGE_FLUSH_INTERVAL_MS).toBe(60000);
    });

    it.each(['59999', '1000', 'soon', '3600001'])(
      'refuses %s outside tests: usage is written at most once a minute',
      (value) => {
        for (const NODE_ENV of ['production', 'development']) {
          expect(() => load({ NODE_ENV, API_KEY_USAGE_FLUSH_INTERVAL_MS: value })).toThrow(ConfigValidationError);
          expect(() => load({ NODE_ENV, API_KEY_USAGE_FLUSH_INTERVAL_MS: value })).toThrow(
            /API_KEY_USAGE_FLUSH_INTERVAL_MS=/,
          );
        }
      },
    );

    it('takes a longer interval anywhere, and a shorter one only under NODE_ENV=test', () => {
      expect(
        load({ NODE_ENV: 'development', API_KEY_USAGE_FLUSH_INTERVAL_MS: '300000' }).API_KEY_USAGE_FLUSH_INTERVAL_MS,
      ).toBe(300000);
      expect(load({ NODE_ENV: 'test', API_KEY_USAGE_FLUSH_INTERVAL_MS: '100' }).API_KEY_USAGE_FLUSH_INTERVAL_MS).toBe(
        100,
      );
      expect(() => load({ NODE_ENV: 'test', API_KEY_USAGE_FLUSH_INTERVAL_MS: '99' })).toThrow(ConfigValidationError);
    });
  });
});
