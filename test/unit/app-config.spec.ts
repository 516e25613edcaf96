import { AuthSettings } from '../../src/auth/auth.settings';
import { loadConfig, settingsOf } from '../../src/config/app-config';
import { ConfigValidationError } from '../../src/config/settings';
import { FEATURE_SETTINGS } from '../../src/feature-settings';
import { RegionKeysSettings } from '../../src/region-keys/region-keys.settings';
import { expectRefused } from '../support/settings';

describe('loadConfig', () => {
  it('applies the documented defaults', () => {
    const config = loadConfig({});
    expect(config.PORT).toBe(3000);
    expect(config.DATA_DIR).toBe('./data');
    expect(config.DATABASE_URL).toBeUndefined();
    expect(config).toMatchObject({
      DATABASE_ACQUIRE_TIMEOUT_MS: 5000,
      DATABASE_CONNECT_TIMEOUT_MS: 60000,
      REDIS_COMMAND_TIMEOUT_MS: 1000,
      REQUEST_TIMEOUT_MS: 60000,
    });
  });

  it('converts numbers and booleans from strings', () => {
    const config = loadConfig({ PORT: '8080', TRUST_PROXY: '2' });
    expect(config.PORT).toBe(8080);
    expect(config.TRUST_PROXY).toBe(2);
  });

  it.each([
    ['PORT', 'abc'],
    ['PORT', '70000'],
    ['NODE_ENV', 'staging'],
    ['LOG_LEVEL', 'loud'],
    ['DATABASE_URL', 'mysql://x'],
    ['DATABASE_ACQUIRE_TIMEOUT_MS', '50'],
    ['DATABASE_CONNECT_TIMEOUT_MS', '-1'],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '86400001'],
    ['DATABASE_APPLICATION_NAME', 'x'.repeat(64)],
    ['REDIS_COMMAND_TIMEOUT_MS', 'soon'],
    ['REQUEST_TIMEOUT_MS', '999'],
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
    ['CORS_ORIGINS', 'https://*.example.test'],
    ['CORS_ORIGINS', 'https://app.example.org,http://*:5173'],
    ['LOG_FORMAT', 'xml'],
    ['SHUTDOWN_DELAY_MS', '-1'],
  ])('refuses a bad %s and names it', (name, value) => {
    expectRefused(loadConfig, name, value);
  });

  it('does not echo a password inside a bad URL', () => {
    expect(() => loadConfig({ DATABASE_URL: 'mysql://app:hunter2@db/x' })).toThrow(
      /DATABASE_URL="mysql:\/\/db" \(user, password, port, path and query not shown\): DATABASE_URL must be/,
    );
  });

  it.each([
    ['a JDBC password parameter', 'DATABASE_URL', 'jdbc:postgresql://db/app?user=app&password=PW-SECRET'],
    ['a slash in the password', 'DATABASE_URL', 'mysql://app:PW/SECRET@db/app'],
    ['a hash in the password', 'DATABASE_URL', 'mysql://app:1234#PW-SECRET@db/app'],
    ['digits then a slash in the password', 'DATABASE_URL', 'mysql://app:4321/PW-SECRET@db/app'],
    ['one slash after the scheme', 'DATABASE_URL', 'postgres:/app:PW-SECRET@db/app'],
    ['no scheme', 'DATABASE_URL', 'app:PW-SECRET@db/app'],
    ['a password in a Redis URL', 'REDIS_URL', 'redis//:PW-SECRET@cache:6379'],
    ['credentials in a base URL', 'PUBLIC_BASE_URL', 'https://app:PW-SECRET@api.example.org/'],
  ])('names a bad URL setting without any part of its password, even with %s', (_, name, value) => {
    const refusal = (() => {
      try {
        loadConfig({ [name]: value });
      } catch (err) {
        return (err as Error).message;
      }
      throw new Error(`${name}=${value} was accepted`);
    })();
    expect(refusal).toContain(`${name}=`);
    expect(refusal).not.toMatch(/PW|SECRET|1234|4321/);
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
      expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(
        /TRUST_PROXY="true": .*number of proxy hops.*list of proxy addresses/,
      );
    });

    const everyIpv4 = Array.from({ length: 256 }, (_, i) => `${i}.0.0.0/8`);
    // fc00::/7 is uniquelocal's: the name counts for the networks it stands for.
    const everyIpv6 = Array.from({ length: 128 }, (_, i) => `${(i * 2).toString(16).padStart(2, '0')}00::/7`);
    it.each([
      ['0.0.0.0/1,128.0.0.0/1', /TRUST_PROXY entry 0\.0\.0\.0\/1 is wider than a proxy network/],
      ['10.0.0.0/7', /entry 10\.0\.0\.0\/7 is wider/],
      ['10.0.0.0/254.0.0.0', /entry 10\.0\.0\.0\/254\.0\.0\.0 is wider/],
      ['::ffff:0.0.0.0/97', /entry ::ffff:0\.0\.0\.0\/97 is wider/],
      ['::/1,8000::/1', /entry ::\/1 is wider/],
      ['2001:db8::/6', /entry 2001:db8::\/6 is wider/],
      ['all 256 IPv4 /8s', /TRUST_PROXY entries together cover every IPv4 address/, everyIpv4.join(',')],
      [
        'uniquelocal and the other 127 IPv6 /7s',
        /TRUST_PROXY entries together cover every IPv6 address/,
        ['uniquelocal', ...everyIpv6.filter((network) => network !== 'fc00::/7')].join(','),
      ],
    ])('refuses %s, which trusts far more than proxies', (label, message, value = label) => {
      expect(() => loadConfig({ TRUST_PROXY: value })).toThrow(message);
    });

    it('takes the widest proxy networks, and many of them short of every address', () => {
      expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8,fc00::/7,::ffff:10.0.0.0/104' }).TRUST_PROXY).toHaveLength(3);
      expect(loadConfig({ TRUST_PROXY: everyIpv4.slice(1).join(',') }).TRUST_PROXY).toHaveLength(255);
      expect(loadConfig({ TRUST_PROXY: everyIpv6.slice(1).join(',') }).TRUST_PROXY).toHaveLength(127);
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
    expect(loadConfig({ CORS_ORIGINS: 'http://127.0.0.1:3000,http://[::1]:8080' }).CORS_ORIGINS).toHaveLength(2);
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
      const config = loadConfig({
        PUBLIC_BASE_URL: 'https://api.example.org/',
        SANDBOX_BASE_URL: 'http://sandbox.example.org:8443/v1',
      });
      expect([config.PUBLIC_BASE_URL, config.SANDBOX_BASE_URL]).toEqual([
        'https://api.example.org',
        'http://sandbox.example.org:8443/v1',
      ]);
      expect(loadConfig({ PUBLIC_BASE_URL: '' }).PUBLIC_BASE_URL).toBeUndefined();
      for (const name of ['PUBLIC_BASE_URL', 'SANDBOX_BASE_URL']) {
        for (const value of [
          'api.example.org',
          '/v1',
          'ftp://api.example.org',
          'https://user:pw@api.example.org',
          'https://api.example.org/?x=1',
          'https://api.example.org/#top',
        ]) {
          expect(() => loadConfig({ [name]: value })).toThrow(
            new RegExp(`${name}=.*must be an absolute http:// or https:// URL`),
          );
        }
      }
    });
  });

  describe('with the settings of the features', () => {
    it('names every bad variable in one message, of AppConfig and the features alike', () => {
      const env = { PORT: 'abc', JWT_SECRET: 'short-secret', MAX_API_KEYS_PER_REGION: '0', SEED_SAMPLE_DATA: 'maybe' };
      let problems: string[] = [];
      try {
        loadConfig(env, FEATURE_SETTINGS);
      } catch (err) {
        problems = (err as ConfigValidationError).problems;
      }
      expect(problems.map((problem) => problem.split('=')[0]).sort()).toEqual([
        'JWT_SECRET',
        'MAX_API_KEYS_PER_REGION',
        'PORT',
        'SEED_SAMPLE_DATA',
      ]);
    });

    it('gives the feature settings validated with it', () => {
      const config = loadConfig({ MAX_API_KEYS_PER_REGION: '5' }, FEATURE_SETTINGS);
      const settings = settingsOf(config, RegionKeysSettings);
      expect(settings.MAX_API_KEYS_PER_REGION).toBe(5);
      expect(settingsOf(config, RegionKeysSettings)).toBe(settings);
    });

    it('reads a class it was not given from the same environment, when first asked for', () => {
      const production = { NODE_ENV: 'production', DATABASE_URL: 'embedded' };
      const config = loadConfig({ ...production, JWT_SECRET: 'x'.repeat(32), JWT_TTL: '900' });
      expect(settingsOf(config, AuthSettings)).toMatchObject({ JWT_SECRET: 'x'.repeat(32), JWT_TTL: 900 });
      expect(() => settingsOf(loadConfig(production), AuthSettings)).toThrow(
        /JWT_SECRET=\(hidden\): JWT_SECRET must be set in production/,
      );
    });
  });
});
