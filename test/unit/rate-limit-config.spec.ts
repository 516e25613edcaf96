import { loadConfig } from '../../src/config/app-config';

describe('loadConfig: rate limits and Redis', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      LOGIN_FAILURE_LIMIT: 10,
      LOGIN_ADDRESS_FAILURE_LIMIT: 30,
      LOGIN_FAILURE_WINDOW_SECONDS: 60,
      SIGNUP_RATE_LIMIT: 20,
      SIGNUP_RATE_WINDOW_SECONDS: 60,
    });
    expect(config.REDIS_URL).toBeUndefined();
  });

  it.each([
    ['LOGIN_FAILURE_LIMIT', '0'],
    ['LOGIN_ADDRESS_FAILURE_LIMIT', '0'],
    ['SIGNUP_RATE_LIMIT', 'many'],
    ['REDIS_URL', 'http://127.0.0.1:6379'],
  ])('refuses a bad %s and names it', (name, value) => {
    expect(() => loadConfig({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('reads the Redis settings', () => {
    expect(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).REDIS_URL).toBe('redis://127.0.0.1:6379');
  });
});
