// `npm test`: the static checks and Jest, side by side. Jest's run keeps both cores busy only
// once its workers are running; the checks (each one process on one core) fill what its global
// setup and its waits leave idle, instead of running first, alone. Jest's output is live; a
// check's is held, and shown as soon as the check fails; the run ends with one line per check.
// The exit code is Jest's, or 1 if a check failed. Arguments go to Jest (`npm test -- region-keys`).
// Written here because concurrently and npm-run-all2 hold every command's output or none, and Jest's must stay live.
import { spawn } from 'node:child_process';

const CHECKS = [
  ['npm', 'run', 'typecheck'],
  ['npm', 'run', '--silent', 'lint'],
  ['npm', 'run', '--silent', 'lint:openapi'],
  ['npm', 'run', '--silent', 'lint:deps'],
  ['npm', 'run', '--silent', 'lint:docker'],
];

function run(command, { live = false } = {}) {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('error', (err) => resolve({ command, status: 1, output: `${output}${err}\n`, started }));
    // No status: ended by a signal.
    child.on('close', (status) => resolve({ command, status: status ?? 1, output, started }));
  });
}

const summary = ({ command, status, started }) =>
  `${command.slice(2).join(' ').replace('--silent ', '')}: ${status === 0 ? 'passed' : `FAILED (exit ${status})`} ` +
  `in ${((Date.now() - started) / 1000).toFixed(1)} s`;

const chromium = await run(['sh', 'scripts/ensure-chromium.sh'], { live: true });
if (chromium.status !== 0) process.exit(chromium.status);

// One after another, beside Jest: a second core's worth of work at most.
const checks = (async () => {
  const results = [];
  for (const command of CHECKS) {
    const result = await run(command);
    const line = summary(result);
    // A failure is shown as it happens, so that it need not wait for Jest.
    if (result.status !== 0) process.stderr.write(`\n${line}\n${result.output}\n`);
    results.push({ ...result, line });
  }
  return results;
})();
// Through `npm run jest`, which holds the flags Node needs to run Jest.
const jest = await run(['npm', 'run', '--silent', 'jest', '--', ...process.argv.slice(2)], { live: true });
const results = await checks;
process.stderr.write(`\nStatic checks:\n${results.map(({ line }) => `  ${line}`).join('\n')}\n`);
const failed = results.filter(({ status }) => status !== 0);
if (failed.length > 0) process.stderr.write(`Failed: ${failed.map(({ command }) => command.at(-1)).join(', ')}\n`);
process.exit(jest.status !== 0 ? jest.status : failed.length > 0 ? 1 : 0);
