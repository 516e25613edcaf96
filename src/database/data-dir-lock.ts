import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';

export class DataDirInUseError extends Error {
  constructor(dataDir: string, pid: number) {
    super(
      `DATA_DIR ${dataDir} is in use by another process (pid ${pid}). ` +
        'The embedded database allows one process at a time: stop that process, ' +
        'point DATA_DIR somewhere else, or set DATABASE_URL to use a PostgreSQL server.',
    );
    this.name = 'DataDirInUseError';
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * An exclusive lock on a data directory, held for the life of the process: a pid file
 * created with O_EXCL. A lock left by a process that no longer runs is taken over.
 * Two PGlite instances writing one directory would corrupt it, so a second opener
 * (another process, or a second open in this one) is refused.
 */
export class DataDirLock {
  // Tools such as the TypeORM CLI end with process.exit(): release the lock then too.
  private readonly onExit = () => this.release();

  private constructor(private readonly path: string) {
    process.once('exit', this.onExit);
  }

  static acquire(dataDir: string): DataDirLock {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'postmaster.lock');
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, String(process.pid));
        closeSync(fd);
        return new DataDirLock(path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
        const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
        if (Number.isInteger(pid) && isAlive(pid)) throw new DataDirInUseError(dir, pid);
        rmSync(path, { force: true });
      }
    }
    throw new Error(`Could not lock DATA_DIR ${dir}`);
  }

  release(): void {
    process.removeListener('exit', this.onExit);
    rmSync(this.path, { force: true });
  }
}
