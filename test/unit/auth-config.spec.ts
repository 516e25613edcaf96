import { ConfigValidationError, loadConfig } from '../../src/config/app-config';

describe('loadConfig: users and tokens', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      BCRYPT_COST: 12,
      JWT_TTL: 3600,
      BASIC_AUTH_CACHE_TTL_SECONDS: 300,
      BASIC_AUTH_CACHE_MAX_ENTRIES: 10000,
      LOGIN_FAILURE_LIMIT: 10,
      LOGIN_FAILURE_WINDOW_SECONDS: 60,
      SIGNUP_RATE_LIMIT: 20,
      SIGNUP_RATE_WINDOW_SECONDS: 60,
    });
    expect(config.JWT_SECRET).toBeUndefined();
    expect(config.REDIS_URL).toBeUndefined();
  });

  it('requires JWT_SECRET in production, naming it', () => {
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(ConfigValidationError);
    expect(() => loadConfig({ NODE_ENV: 'production' })).toThrow(/JWT_SECRET=\(hidden\): JWT_SECRET must be set in production/);
    expect(() => loadConfig({ NODE_ENV: 'production', JWT_SECRET: '' })).toThrow(/JWT_SECRET/);
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).JWT_SECRET).toBe('x'.repeat(32));
  });

  it('refuses a short JWT_SECRET anywhere without echoing it', () => {
    expect(() => loadConfig({ JWT_SECRET: 'short-secret' })).toThrow(/JWT_SECRET=\(hidden\): JWT_SECRET must be at least 32 characters/);
    expect(() => loadConfig({ JWT_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it.each([
    ['BCRYPT_COST', '3'],
    ['BCRYPT_COST', '17'],
    ['JWT_TTL', '0'],
    ['LOGIN_FAILURE_LIMIT', '0'],
    ['SIGNUP_RATE_LIMIT', 'many'],
    ['BASIC_AUTH_CACHE_TTL_SECONDS', '-1'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
  ])('refuses a bad %s and names it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('reads the optional token claims and the Redis settings', () => {
    const config = loadConfig({ JWT_ISSUER: 'https://api.example', JWT_AUDIENCE: 'galaxy', REDIS_URL: 'redis://127.0.0.1:6379', JWT_TTL: '900' });
    expect(config).toMatchObject({ JWT_ISSUER: 'https://api.example', JWT_AUDIENCE: 'galaxy', REDIS_URL: 'redis://127.0.0.1:6379', JWT_TTL: 900 });
  });
});
