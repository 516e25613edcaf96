import { mkdtempSync, openAsBlob, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import type { PGlite } from '@electric-sql/pglite';
import type { PGLiteSocketServer } from '@electric-sql/pglite-socket';

import { DataDirLock } from './data-dir-lock';

const SOCKET_PORT = 5432;
/**
 * PostgreSQL's 128MB default is zeroed at every start (docs/development.md, "Keeping it fast")
 * and only doubles what PGlite already holds in memory: its files live in the process too, or
 * in the OS's cache.
 */
const SHARED_BUFFERS = '16MB';

/**
 * PostgreSQL compiled to WebAssembly (PGlite), persisted in a directory and served over a
 * Unix socket to the ordinary `pg` driver, so the application runs the same code on it as
 * on a PostgreSQL server.
 *
 * PGlite is a single session. Callers must use a pool of exactly one connection: the
 * pool then serialises transactions, which gives the same results as PostgreSQL's row
 * locks would. The socket server accepts a few connections only so that the pool can
 * replace a client it discarded (pg-pool drops a client after any failed query) while
 * the old socket is still closing.
 */
export class EmbeddedPostgres {
  private constructor(
    private readonly db: PGlite,
    private readonly server: PGLiteSocketServer,
    private readonly socketDir: string,
    private readonly lock: DataDirLock | undefined,
  ) {}

  /**
   * `dataDir` of `memory://` keeps everything in memory (tests), starting empty; `memory://<file>`
   * starts from an image of a data directory (a tar made by PGlite's dumpDataDir), which spares
   * the initdb and migrations a fresh one needs (tests start each database from a migrated
   * image). Anything else is a directory.
   */
  static async start(dataDir: string): Promise<EmbeddedPostgres> {
    const inMemory = dataDir.startsWith('memory://');
    const image = inMemory ? dataDir.slice('memory://'.length) : '';
    const lock = inMemory ? undefined : DataDirLock.acquire(dataDir);
    try {
      // Loaded here, not at the top: a server on PostgreSQL (DATABASE_URL) never holds
      // PGlite's half a megabyte of code.
      /* eslint-disable @typescript-eslint/no-require-imports */
      const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
      const { PGLiteSocketServer } =
        require('@electric-sql/pglite-socket') as typeof import('@electric-sql/pglite-socket');
      /* eslint-enable @typescript-eslint/no-require-imports */
      const db = await PGlite.create({
        ...(inMemory
          ? { loadDataDir: image ? await openAsBlob(image) : undefined }
          : { dataDir: join(resolve(dataDir), 'pgdata') }),
        startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${SHARED_BUFFERS}`],
      });
      const socketDir = mkdtempSync(join(tmpdir(), 'pglite-'));
      const server = new PGLiteSocketServer({
        db,
        path: join(socketDir, `.s.PGSQL.${SOCKET_PORT}`),
        maxConnections: 4,
      });
      await server.start();
      return new EmbeddedPostgres(db, server, socketDir, lock);
    } catch (err) {
      lock?.release();
      throw err;
    }
  }

  /** Connection settings for `pg`: the host is the socket's directory. */
  get connection() {
    return { host: this.socketDir, port: SOCKET_PORT, username: 'postgres', database: 'postgres' };
  }

  /** Writes an image of the data directory, as `memory://<file>` starts from. */
  async saveImage(file: string): Promise<void> {
    await this.db.exec('CHECKPOINT');
    const image = await this.db.dumpDataDir('none');
    writeFileSync(file, Buffer.from(await image.arrayBuffer()));
  }

  async stop(): Promise<void> {
    try {
      await this.server.stop();
      await this.db.close();
    } finally {
      rmSync(this.socketDir, { recursive: true, force: true });
      this.lock?.release();
    }
  }
}
