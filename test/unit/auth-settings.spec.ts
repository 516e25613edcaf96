import { AuthSettings } from '../../src/auth/auth.settings';
import { loadSettings } from '../../src/config/app-config';
import { ConfigValidationError } from '../../src/config/settings';

// A production environment names its database (DATABASE_URL): these tests are about the rest.
const load = (env: NodeJS.ProcessEnv) => loadSettings(AuthSettings, { DATABASE_URL: 'embedded', ...env });

describe('AuthSettings', () => {
  it('has the documented defaults', () => {
    const settings = load({});
    expect(settings).toMatchObject({
      JWT_TTL: 3600,
      BASIC_AUTH_CACHE_TTL_SECONDS: 300,
      BASIC_AUTH_CACHE_MAX_ENTRIES: 10000,
    });
    expect(settings.JWT_SECRET).toBeUndefined();
  });

  it('requires JWT_SECRET in production, naming it', () => {
    expect(() => load({ NODE_ENV: 'production' })).toThrow(ConfigValidationError);
    expect(() => load({ NODE_ENV: 'production' })).toThrow(
      /JWT_SECRET=\(hidden\): JWT_SECRET must be set in production/,
    );
    expect(() => load({ NODE_ENV: 'production', JWT_SECRET: '' })).toThrow(/JWT_SECRET/);
    expect(load({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).JWT_SECRET).toBe('x'.repeat(32));
  });

  it('refuses a short JWT_SECRET anywhere without echoing it', () => {
    expect(() => load({ JWT_SECRET: 'short-secret' })).toThrow(
      /JWT_SECRET=\(hidden\): JWT_SECRET must be at least 32 characters/,
    );
    expect(() => load({ JWT_SECRET: 'short-secret' })).not.toThrow(/short-secret/);
  });

  it.each([
    ['JWT_TTL', '0'],
    ['BASIC_AUTH_CACHE_TTL_SECONDS', '-1'],
  ])('refuses a bad %s and names it', (name, value) => {
    expect(() => load({ [name]: value })).toThrow(new RegExp(`${name}=`));
  });

  it('reads the optional token claims', () => {
    expect(load({ JWT_ISSUER: 'https://api.example', JWT_AUDIENCE: 'galaxy', JWT_TTL: '900' })).toMatchObject({
      JWT_ISSUER: 'https://api.example',
      JWT_AUDIENCE: 'galaxy',
      JWT_TTL: 900,
    });
  });
});
