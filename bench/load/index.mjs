// The load generator, always in processes of its own so that it never competes with the
// benchmark's bookkeeping: wrk when it is installed (C, one thread drives tens of
// thousands of requests a second), else autocannon (a devDependency, so a clean clone has
// it). BENCH_LOAD=autocannon or BENCH_LOAD=wrk picks one.
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const here = (name) => fileURLToPath(new URL(name, import.meta.url));

function wrkVersion() {
  try {
    // wrk prints its banner and exits 1 when given no URL.
    execFileSync('wrk', ['--version'], { stdio: 'pipe' });
  } catch (err) {
    const banner = `${err.stdout ?? ''}${err.stderr ?? ''}`;
    if (/^wrk /m.test(banner)) return banner.split('\n')[0].split(' Copyright')[0].trim();
  }
  return null;
}

export function pickLoadGenerator(choice = process.env.BENCH_LOAD) {
  const wrk = choice === 'autocannon' ? null : wrkVersion();
  if (choice === 'wrk' && !wrk) throw new Error('BENCH_LOAD=wrk, but wrk is not installed (apt-get install wrk)');
  if (wrk) return { name: wrk, run: runWrk };
  const { version } = JSON.parse(
    execFileSync(process.execPath, ['-p', 'JSON.stringify(require("autocannon/package.json"))']),
  );
  return { name: `autocannon ${version}`, run: runAutocannon };
}

/**
 * One measurement. `spec`: { url, seconds, connections, headers?, flow? } where flow
 * 'create-delete' alternates POST of a key and DELETE of the key just made (per connection
 * with autocannon; from a shared queue with wrk, so each DELETE names a key that exists).
 * Resolves to { rps, p50, p99, requests, non2xx, errors } (latencies in ms).
 */
function runWrk(spec) {
  const args = ['-t1', `-c${spec.connections}`, `-d${spec.seconds}s`, '--latency', '--timeout', '10s'];
  for (const [name, value] of Object.entries(spec.headers ?? {})) args.push('-H', `${name}: ${value}`);
  if (spec.flow === 'create-delete') args.push('-s', here('create-delete.lua'));
  args.push(spec.url);
  return collect('wrk', args, { ...process.env, BENCH_API_KEY: spec.headers?.['x-api-key'] ?? '' }).then(parseWrk);
}

const UNIT_MS = { us: 0.001, ms: 1, s: 1000, m: 60000 };
const toMs = (text) => {
  const [, value, unit] = /^([\d.]+)(us|ms|s|m)$/.exec(text) ?? [];
  if (!unit) throw new Error(`wrk latency not understood: ${text}`);
  return Number(value) * UNIT_MS[unit];
};

function parseWrk(out) {
  const find = (re) => re.exec(out)?.[1];
  const requests = Number(find(/(\d+) requests in /));
  const rps = Number(find(/Requests\/sec:\s+([\d.]+)/));
  if (!Number.isFinite(rps) || !Number.isFinite(requests)) throw new Error(`wrk output not understood:\n${out}`);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps,
    requests,
    p50: toMs(find(/^\s+50%\s+(\S+)/m)),
    p99: toMs(find(/^\s+99%\s+(\S+)/m)),
    non2xx: Number(find(/Non-2xx or 3xx responses: (\d+)/) ?? 0),
    errors: socket ? socket.slice(1).reduce((sum, n) => sum + Number(n), 0) : 0,
  };
}

function runAutocannon(spec) {
  return collect(process.execPath, [here('autocannon-child.mjs'), JSON.stringify(spec)], process.env).then((out) =>
    JSON.parse(out),
  );
}

function collect(command, args, env) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${command} exited with ${code}: ${err || out}`)),
    );
  });
}
