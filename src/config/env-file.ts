import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Reads `.env` in the working directory, when there is one, into `env`: a variable already
 * set in the environment keeps its value (the environment wins over the file, as with
 * Docker, systemd and Node's --env-file). Node's own parser reads the file, so quoting and
 * comments follow its rules. Returns the file's path, or null when there is none.
 *
 * Imported for its effect first thing by each entry point (server, CLI, TypeORM CLI), so
 * that everything read from the environment at load time (the tracing switch included)
 * sees the file too.
 */
export function applyEnvFile(env: NodeJS.ProcessEnv = process.env, dir = process.cwd()): string | null {
  const path = join(dir, '.env');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new Error(`Cannot read ${path}: ${(err as Error).message}`, { cause: err });
  }
  for (const [name, value] of Object.entries(parseEnv(text))) {
    if (env[name] === undefined) env[name] = value;
  }
  return path;
}
