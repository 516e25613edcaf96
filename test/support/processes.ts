import { ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

const ROOT = resolve('.');

/** Node's compile cache, when the global setup chose one: each process a test starts loads its code faster. */
const compileCache = (): Record<string, string> =>
  process.env.NODE_COMPILE_CACHE ? { NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE } : {};

export async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}

export interface RunningProcess {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  /** Resolves once stdout or stderr matches, rejects if the process exits first or time runs out. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  exited: Promise<number | null>;
}

/**
 * Starts a compiled entry point (dist/, built by the Jest global setup) as a real process;
 * `cwd` and Node's own flags for another installation of it (a production install).
 */
export function startProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  { cwd = ROOT, nodeFlags = [] }: { cwd?: string; nodeFlags?: string[] } = {},
): RunningProcess {
  const child = spawn(process.execPath, [...nodeFlags, resolve(cwd, script), ...args], {
    cwd,
    // Servers run side by side: metrics off unless a test asks for them (the default port would clash).
    env: { PATH: process.env.PATH ?? '', TZ: 'UTC', METRICS_PORT: '0', ...compileCache(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += String(d)));
  child.stderr.on('data', (d) => (err += String(d)));
  const exited = new Promise<number | null>((done) => child.once('exit', (code) => done(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited,
    waitFor: (pattern, timeoutMs = 60000) =>
      new Promise((done, fail) => {
        const started = Date.now();
        const timer = setInterval(() => {
          const match = (out + err).match(pattern);
          if (match) {
            clearInterval(timer);
            done(match);
          } else if (child.exitCode !== null || Date.now() - started > timeoutMs) {
            clearInterval(timer);
            fail(new Error(`Did not see ${pattern} (exit ${child.exitCode}).\nstdout: ${out}\nstderr: ${err}`));
          }
        }, 50);
      }),
  };
}

/**
 * Runs a compiled entry point to completion. With `timeoutMs`, one still running then is
 * killed and the run fails: for commands whose bug would be to never exit.
 */
export async function runProcess(
  script: string,
  args: string[],
  env: Record<string, string>,
  { timeoutMs, ...options }: { cwd?: string; timeoutMs?: number } = {},
) {
  const running = startProcess(script, args, env, options);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, fail) => {
    if (timeoutMs === undefined) return;
    timer = setTimeout(() => {
      running.child.kill('SIGKILL');
      fail(
        new Error(
          `${script} ${args.join(' ')} did not exit within ${timeoutMs} ms.\nstdout: ${running.stdout()}\nstderr: ${running.stderr()}`,
        ),
      );
    }, timeoutMs);
  });
  try {
    const code = await Promise.race([running.exited, timedOut]);
    return { code, stdout: running.stdout(), stderr: running.stderr() };
  } finally {
    clearTimeout(timer);
  }
}
