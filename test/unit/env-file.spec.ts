import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { loadConfig, loadSettings } from '../../src/config/app-config';
import { applyEnvFile } from '../../src/config/env-file';
import { FEATURE_SETTINGS } from '../../src/feature-settings';
import { RegionKeysSettings } from '../../src/region-keys/region-keys.settings';

describe('applyEnvFile (.env in the working directory)', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'env-file-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('fills the settings the environment does not set, and the environment wins over the file', () => {
    writeFileSync(
      join(dir, '.env'),
      '# a comment\nPORT=8081\nLOG_LEVEL=debug\nINITIAL_REGION_NAME="Regio Utrecht"\nCORS_ORIGINS=https://app.example.org\n',
    );
    const env: NodeJS.ProcessEnv = { LOG_LEVEL: 'warn' };
    expect(applyEnvFile(env, dir)).toBe(join(dir, '.env'));
    const config = loadConfig(env);
    expect(config.PORT).toBe(8081);
    expect(config.LOG_LEVEL).toBe('warn');
    expect(loadSettings(RegionKeysSettings, env).initialRegionName).toBe('Regio Utrecht');
    expect(config.CORS_ORIGINS).toEqual(['https://app.example.org']);
  });

  it('turns a YAML-style line into no setting, and the warning about it shows no part of its value', () => {
    writeFileSync(join(dir, '.env'), 'DATABASE_URL: postgres://app:hunter2@db/app?sslmode=require\n');
    const env: NodeJS.ProcessEnv = { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) };
    applyEnvFile(env, dir);
    expect(env.DATABASE_URL).toBeUndefined();
    expect(() => loadConfig(env, FEATURE_SETTINGS)).toThrow(/A variable named DATABASE_URL followed by characters/);
    expect(() => loadConfig(env, FEATURE_SETTINGS)).not.toThrow(/hunter2|sslmode|db\/app/);
  });

  it('keeps a variable set to the empty string in the environment', () => {
    writeFileSync(join(dir, '.env'), 'REDIS_URL=redis://cache:6379\n');
    const env: NodeJS.ProcessEnv = { REDIS_URL: '' };
    applyEnvFile(env, dir);
    expect(env.REDIS_URL).toBe('');
  });

  it('does nothing when there is no .env', () => {
    const env: NodeJS.ProcessEnv = {};
    expect(applyEnvFile(env, dir)).toBeNull();
    expect(env).toEqual({});
  });

  it('says which file it cannot read', () => {
    // A directory where the file should be: reading it fails with EISDIR.
    const unreadable = mkdtempSync(join(tmpdir(), 'env-file-'));
    mkdirSync(join(unreadable, '.env'));
    try {
      expect(() => applyEnvFile({}, unreadable)).toThrow(`Cannot read ${join(unreadable, '.env')}`);
    } finally {
      rmSync(unreadable, { recursive: true, force: true });
    }
  });
});
