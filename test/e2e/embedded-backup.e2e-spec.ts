import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { jest } from '@jest/globals';

import { newRegion, startTestApp } from '../support/test-app';
import { migratedDataDir, usesPostgresServer } from '../support/test-database';

/**
 * The embedded database's backup and restore exactly as docs/operations.md ("Upgrades,
 * rollbacks and backups") gives them: stop the server, tar DATA_DIR, unpack into an empty
 * directory, start there. (PostgreSQL's are pg_dump's and pg_restore's own.)
 */
jest.setTimeout(120_000);

const describeEmbedded = usesPostgresServer() ? describe.skip : describe;

describeEmbedded('a backup of the embedded database', () => {
  const work = mkdtempSync(join(tmpdir(), 'rk-backup-'));
  afterAll(() => rmSync(work, { recursive: true, force: true }));

  it('restored into an empty DATA_DIR, serves the data it held', async () => {
    const dataDir = migratedDataDir('rk-backup-data-');
    const original = await startTestApp({ DATA_DIR: dataDir }, { env: {}, drop: async () => undefined });
    const region = await newRegion(original, 'Backed-up region');
    await original.close();

    const archive = join(work, 'region-keys-data.tgz');
    execFileSync('tar', ['-C', dataDir, '-czf', archive, '.']);
    rmSync(dataDir, { recursive: true, force: true });
    const restored = join(work, 'restored');
    mkdirSync(restored, { recursive: true });
    execFileSync('tar', ['-C', restored, '-xzf', archive]);

    const t = await startTestApp({ DATA_DIR: restored }, { env: {}, drop: async () => undefined });
    try {
      const me = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': region.key } });
      expect(me.statusCode).toBe(200);
      expect(me.json()).toMatchObject({ id: region.regionId, name: 'Backed-up region' });
    } finally {
      await t.close();
    }
  });
});
