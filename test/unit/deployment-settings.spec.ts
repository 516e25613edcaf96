import { AppConfig, loadConfig, lookalikeSettingsOf } from '../../src/config/app-config';
import { editDistance, lookalikeWarnings } from '../../src/config/lookalike-settings';
import { settingNames } from '../../src/config/settings';
import { FEATURE_SETTINGS } from '../../src/feature-settings';

const PRODUCTION = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
const KNOWN = [AppConfig, ...FEATURE_SETTINGS].flatMap(settingNames);
const warnings = (env: NodeJS.ProcessEnv) => lookalikeWarnings(env, KNOWN);

describe('DATABASE_URL in production', () => {
  it('is required: a missing (or misspelt) one refuses the start, saying how to ask for the embedded database', () => {
    expect(() => loadConfig(PRODUCTION, FEATURE_SETTINGS)).toThrow(
      /DATABASE_URL=\(unset\): DATABASE_URL must be set in production: a postgres:\/\/ URL, or DATABASE_URL=embedded/,
    );
    expect(() => loadConfig({ ...PRODUCTION, DATABASE_URL: ' ' }, FEATURE_SETTINGS)).toThrow(/DATABASE_URL/);
    // The refusal names the look-alike too: the likely reason the setting is missing.
    expect(() => loadConfig({ ...PRODUCTION, DATABSE_URL: 'postgres://db/app' }, FEATURE_SETTINGS)).toThrow(
      /DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL\?/,
    );
  });

  it('takes the embedded database only by name, and a PostgreSQL URL as before', () => {
    const embedded = loadConfig({ ...PRODUCTION, DATABASE_URL: 'embedded' }, FEATURE_SETTINGS);
    expect(embedded.postgresUrl).toBeUndefined();
    const server = loadConfig({ ...PRODUCTION, DATABASE_URL: 'postgres://db/app' }, FEATURE_SETTINGS);
    expect(server.postgresUrl).toBe('postgres://db/app');
  });

  it('refuses an embedded database kept in memory only (DATA_DIR=memory://), which forgets everything at each restart', () => {
    for (const dataDir of ['memory://', 'memory:///tmp/image.tar']) {
      expect(() =>
        loadConfig({ ...PRODUCTION, DATABASE_URL: 'embedded', DATA_DIR: dataDir }, FEATURE_SETTINGS),
      ).toThrow(
        /DATA_DIR=".*": DATA_DIR must be a directory in production: memory:\/\/ keeps the embedded database in memory only/,
      );
    }
    // A directory, a PostgreSQL server (DATA_DIR unused), and tests keep working.
    expect(loadConfig({ ...PRODUCTION, DATABASE_URL: 'embedded', DATA_DIR: '/data' }, FEATURE_SETTINGS).DATA_DIR).toBe(
      '/data',
    );
    expect(loadConfig({ ...PRODUCTION, DATABASE_URL: 'postgres://db/app', DATA_DIR: 'memory://' }).postgresUrl).toBe(
      'postgres://db/app',
    );
    expect(loadConfig({ NODE_ENV: 'test', DATA_DIR: 'memory://' }).DATA_DIR).toBe('memory://');
  });

  it('stays optional elsewhere, where an absent one and `embedded` both mean the embedded database', () => {
    expect(loadConfig({}).postgresUrl).toBeUndefined();
    expect(loadConfig({ DATABASE_URL: 'embedded' }).postgresUrl).toBeUndefined();
    expect(() => loadConfig({ DATABASE_URL: 'Embedded' })).toThrow(/DATABASE_URL=\(not shown: not a URL/);
  });
});

describe('variables that look like settings', () => {
  it('counts a swap of neighbours as one edit', () => {
    expect(editDistance('DATABSE_URL', 'DATABASE_URL')).toBe(1);
    expect(editDistance('JWT_SECERT', 'JWT_SECRET')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
  });

  it('warns about a near miss of a setting, one line each, naming the setting and never the value', () => {
    const env = { DATABSE_URL: 'postgres://app:hunter2@db/app', JWT_SECERT: 'a-secret-value', LOG_LEVLE: 'debug' };
    expect(warnings(env)).toEqual([
      'DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL?',
      'JWT_SECERT is not a setting and is ignored; did you mean JWT_SECRET?',
      'LOG_LEVLE is not a setting and is ignored; did you mean LOG_LEVEL?',
    ]);
    expect(warnings(env).join('\n')).not.toMatch(/hunter2|a-secret-value|debug/);
    // Case counts too: the service reads upper-case names only.
    expect(warnings({ database_url: 'x' })).toEqual([
      'database_url is not a setting and is ignored; did you mean DATABASE_URL?',
    ]);
  });

  it("warns about an unknown name in a settings family (the first word two settings share), naming the family's nearest", () => {
    expect(warnings({ DATABASE_HOST: 'db', REDIS_HOST: 'cache', SHUTDOWN_GRACE_SECONDS: '5' })).toEqual([
      'DATABASE_HOST is not a setting and is ignored; did you mean DATABASE_URL?',
      'REDIS_HOST is not a setting and is ignored; did you mean REDIS_URL?',
      'SHUTDOWN_GRACE_SECONDS is not a setting and is ignored; did you mean SHUTDOWN_GRACE_MS?',
    ]);
  });

  it('says nothing about settings, nor about what machines, npm and OpenTelemetry set for themselves', () => {
    expect(
      warnings({
        DATABASE_URL: 'postgres://db/app',
        JWT_SECRET: 'x',
        NODE_OPTIONS: '--max-old-space-size=512',
        NODE_EXTRA_CA_CERTS: '/etc/ca.pem',
        npm_config_cache: '/tmp',
        npm_lifecycle_event: 'start',
        OTEL_SERVICE_NAME: 'api',
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
        HOME: '/home/node',
        PATH: '/usr/bin',
        HOSTNAME: 'api-1',
        MALLOC_ARENA_MAX: '2',
        GIT_AUTHOR_NAME: 'someone',
      }),
    ).toEqual([]);
  });

  it('shows a malformed name (a YAML-style line of .env) only up to its first character no name may hold', () => {
    // Node's .env parser makes `DATABASE_URL: postgres://...?sslmode=require` a variable named up to the `=`.
    const env = {
      'DATABASE_URL: postgres://app:hunter2@db/app?sslmode': 'require',
      'JWT_SECRET :a-secret-value': 'x',
      'BASH_FUNC_greet%%': '() {  echo hi\n}',
    };
    expect(warnings(env)).toEqual([
      'A variable named DATABASE_URL followed by characters no name may hold (rest not shown) is ignored; is its line malformed? Settings are written NAME=value, as DATABASE_URL=...',
      'A variable named JWT_SECRET followed by characters no name may hold (rest not shown) is ignored; is its line malformed? Settings are written NAME=value, as JWT_SECRET=...',
    ]);
    expect(() => loadConfig({ ...PRODUCTION, ...env }, FEATURE_SETTINGS)).toThrow(/DATABASE_URL followed by/);
    expect(() => loadConfig({ ...PRODUCTION, ...env }, FEATURE_SETTINGS)).not.toThrow(/hunter2|sslmode|a-secret/);
  });

  it('are found in the environment a configuration was read from, features included', () => {
    const config = loadConfig({ DATABSE_URL: 'x', BCRYPT_COTS: '4', PORT: '3001' }, FEATURE_SETTINGS);
    expect(lookalikeSettingsOf(config)).toEqual([
      'BCRYPT_COTS is not a setting and is ignored; did you mean BCRYPT_COST?',
      'DATABSE_URL is not a setting and is ignored; did you mean DATABASE_URL?',
    ]);
  });
});
