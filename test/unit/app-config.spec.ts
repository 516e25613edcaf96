import { ConfigValidationError, loadConfig } from '../../src/config/app-config';
import { generateApiKey, isWellFormedApiKey } from '../../src/region-keys/api-key-codec';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.DATA_DIR).toBe('./data');
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config.MAX_API_KEYS_PER_REGION).toBe(100);
    expect(config.initialRegionName).toBe('Default region');
    expect(config).toMatchObject({ DATABASE_CONNECT_TIMEOUT_MS: 5000, REDIS_COMMAND_TIMEOUT_MS: 1000, REQUEST_TIMEOUT_MS: 60000, UPLOAD_CONCURRENCY: 4 });
  });

  it('converts numbers and booleans from strings', () => {
    const config = loadConfig({ PORT: '8080', TRUST_PROXY: '2', MAX_API_KEYS_PER_REGION: '5' });
    expect(config.PORT).toBe(8080);
    expect(config.TRUST_PROXY).toBe(2);
    expect(config.MAX_API_KEYS_PER_REGION).toBe(5);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['INITIAL_REGION_API_KEY', 'too-short'],
    ['MAX_API_KEYS_PER_REGION', '0'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '50'],
    ['REDIS_COMMAND_TIMEOUT_MS', 'soon'],
    ['REQUEST_TIMEOUT_MS', '999'],
    ['UPLOAD_CONCURRENCY', '0'],
    ['TRUST_PROXY', 'true'],
    ['TRUST_PROXY', '11'],
    ['TRUST_PROXY', '10.0.0.0/33'],
    ['TRUST_PROXY', 'proxy.internal'],
    ['TRUST_PROXY', '10.0.0.1,,10.0.0.2'],
    ['CORS_ORIGINS', '*'],
    ['CORS_ORIGINS', 'https://app.example.org/'],
    ['CORS_ORIGINS', 'https://app.example.org/path'],
    ['CORS_ORIGINS', 'app.example.org'],
    ['CORS_ORIGINS', 'ftp://app.example.org'],
    ['LOG_FORMAT', 'xml'],
    ['SHUTDOWN_DELAY_MS', '-1'],
  ])('refuses a bad %s and names it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(ConfigValidationError);
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`^Invalid configuration:[\\s\\S]*${name}=`));
  });

  describe('INITIAL_REGION_API_KEY', () => {
    // The shape of a generated key, but a checksum that does not match: every request with it would be a 401.
    const madeUp = `rk_${'a'.repeat(49)}`;

    it('refuses an rk_ value that is not a generated key, naming the variable and how to make one', () => {
      expect(isWellFormedApiKey(madeUp)).toBe(false);
      for (const value of [madeUp, `rk_operator-chosen-initial-key-0123456789`, `${generateApiKey()}x`]) {
        expect(() => loadConfig({ INITIAL_REGION_API_KEY: value })).toThrow(ConfigValidationError);
        expect(() => loadConfig({ INITIAL_REGION_API_KEY: value })).toThrow(
          /^Invalid configuration:\n {2}- INITIAL_REGION_API_KEY=\(hidden\): .*not a generated key.*cli -- key generate/,
        );
        expect(() => loadConfig({ INITIAL_REGION_API_KEY: value })).not.toThrow(value);
      }
    });

    it('takes a generated key, and any other value of 32+ printable characters, as they authenticate', () => {
      for (const value of [generateApiKey(), 'operator-chosen-initial-key-0123456789abcdef', `RK_${'a'.repeat(49)}`]) {
        expect(isWellFormedApiKey(value)).toBe(true);
        expect(loadConfig({ INITIAL_REGION_API_KEY: value }).INITIAL_REGION_API_KEY).toBe(value);
      }
    });
  });

  it('does not echo a password inside a bad URL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2@db/x' })).toThrow(/DATABASE_URL="mysql:\/\/app:\*\*\*@db\/x"/);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2@db/x' })).not.toThrow(/hunter2/);
  });

  it('does not echo a secret value in the error', () => {
    expect(() => loadConfig({ INITIAL_REGION_API_KEY: 'secret-but-short' })).toThrow(/INITIAL_REGION_API_KEY=\(hidden\)/);
    expect(() => loadConfig({ INITIAL_REGION_API_KEY: 'secret-but-short' })).not.toThrow(/secret-but-short/);
  });

  describe('TRUST_PROXY', () => {
    it.each([
      ['', false],
      ['false', false],
      ['0', false],
      ['1', 1],
      [' 3 ', 3],
      ['10.0.0.0/8', ['10.0.0.0/8']],
      ['127.0.0.1, ::1, fd00::/8', ['127.0.0.1', '::1', 'fd00::/8']],
      ['loopback,uniquelocal', ['loopback', 'uniquelocal']],
    ])('reads %j as %j', (value, expected) => {
      expect(loadConfig({ TRUST_PROXY: value }).TRUST_PROXY).toEqual(expected);
    });

    it('refuses true with a message that says what to set instead', () => {
      expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY="true": .*number of proxy hops.*list of proxy addresses/);
    });

    it('is off by default', () => {
      expect(loadConfig({}).TRUST_PROXY).toBe(false);
    });
  });

  it('reads CORS_ORIGINS as a list of exact origins, empty by default', () => {
    expect(loadConfig({}).CORS_ORIGINS).toEqual([]);
    expect(loadConfig({ CORS_ORIGINS: ' https://app.example.org, http://localhost:5173 ,' }).CORS_ORIGINS).toEqual([
      'https://app.example.org',
      'http://localhost:5173',
    ]);
  });

  describe('the sandbox settings', () => {
    it('is live unless API_ENVIRONMENT says sandbox, and refuses any other value naming the variable', () => {
      expect(loadConfig({}).API_ENVIRONMENT).toBe('live');
      expect(loadConfig({ API_ENVIRONMENT: 'sandbox' }).API_ENVIRONMENT).toBe('sandbox');
      for (const value of ['test', 'Sandbox', 'production', ' live']) {
        expect(() => loadConfig({ API_ENVIRONMENT: value })).toThrow(/API_ENVIRONMENT=.*must be one of: live, sandbox/);
      }
    });

    it('takes absolute http(s) base URLs, without their trailing slash, and refuses anything else naming the variable', () => {
      const config = loadConfig({ PUBLIC_BASE_URL: 'https://api.example.org/', SANDBOX_BASE_URL: 'http://sandbox.example.org:8443/v1' });
      expect([config.PUBLIC_BASE_URL, config.SANDBOX_BASE_URL]).toEqual(['https://api.example.org', 'http://sandbox.example.org:8443/v1']);
      expect(loadConfig({ PUBLIC_BASE_URL: '' }).PUBLIC_BASE_URL).toBeUndefined();
      for (const name of ['PUBLIC_BASE_URL', 'SANDBOX_BASE_URL']) {
        for (const value of ['api.example.org', '/v1', 'ftp://api.example.org', 'https://user:pw@api.example.org', 'https://api.example.org/?x=1', 'https://api.example.org/#top']) {
          expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=.*must be an absolute http:// or https:// URL`));
        }
      }
    });

    it('refuses a sandbox key as INITIAL_REGION_API_KEY of a live instance, and a live key in a sandbox, naming the variable', () => {
      expect(() => loadConfig({ INITIAL_REGION_API_KEY: generateApiKey('sandbox') })).toThrow(
        /INITIAL_REGION_API_KEY=\(hidden\): .*is a sandbox key \(rk_test_\) but API_ENVIRONMENT is live/,
      );
      expect(() => loadConfig({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: generateApiKey('live') })).toThrow(
        /INITIAL_REGION_API_KEY=\(hidden\): .*is a live key \(rk_\) but API_ENVIRONMENT is sandbox/,
      );
      const sandboxKey = generateApiKey('sandbox');
      expect(loadConfig({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: sandboxKey }).INITIAL_REGION_API_KEY).toBe(sandboxKey);
      const operatorKey = 'operator-chosen-initial-key-0123456789abcdef';
      expect(loadConfig({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: operatorKey }).INITIAL_REGION_API_KEY).toBe(operatorKey);
      // A made-up rk_test_ value is no generated key in either environment.
      expect(() => loadConfig({ API_ENVIRONMENT: 'sandbox', INITIAL_REGION_API_KEY: `rk_test_${'a'.repeat(49)}` })).toThrow(/not a generated key/);
    });

    it('refuses SEED_SAMPLE_DATA=false in a sandbox, which always starts with sample data', () => {
      expect(() => loadConfig({ API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: 'false' })).toThrow(/SEED_SAMPLE_DATA=false: .*sandbox always starts with sample data/);
      expect(loadConfig({ API_ENVIRONMENT: 'sandbox', SEED_SAMPLE_DATA: 'true' }).SEED_SAMPLE_DATA).toBe(true);
      expect(loadConfig({ SEED_SAMPLE_DATA: 'false' }).SEED_SAMPLE_DATA).toBe(false);
    });
  });
});
