import { runCli } from '../../src/cli-runner';

/**
 * The operator CLI's command line run in the test's own process: the code the process runs
 * (src/cli.ts only exits with the code runCli resolves to), without the seconds of CPU a
 * process spends loading it. The answer has the shape of runProcess's. The environment is
 * only `env`, on top of what startProcess gives every process, as for a process. For tests
 * about what a command does or refuses; the processes suite runs the CLI as a process, for
 * its exit code and streams.
 */
export async function runCliInProcess(args: string[], env: Record<string, string>) {
  let stdout = '';
  let stderr = '';
  const toStderr = { write: (text: string) => (stderr += text) };
  const code = await runCli(
    args,
    { TZ: 'UTC', METRICS_PORT: '0', ...env },
    { stdout: { write: (text: string) => (stdout += text) }, stderr: toStderr, log: toStderr },
  );
  return { code, stdout, stderr };
}
