// What bench/instructions.mjs and bench/instructions-servers.mjs share: servers run under
// valgrind's callgrind, driven with kept-alive requests, and the instructions they ran
// between two points read from callgrind's dumps.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';

import { median } from './report.mjs';

/** valgrind and its options for a server whose dumps go to `dumps`; `collect` as callgrind's options, e.g. a --toggle-collect. */
export const callgrind = (dumps, collect) => [
  'valgrind',
  '--tool=callgrind',
  ...collect,
  '--compress-strings=no',
  `--callgrind-out-file=${dumps}/callgrind.%p`,
];

/** Node's flags that name the JIT code in the dumps (/tmp/perf-<pid>.map), when they are kept; V8's own log goes with them. */
export const jitNames = (dumps, keep) =>
  keep ? ['--perf-basic-prof', '--no-logfile-per-isolate', `--logfile=${dumps}/v8.log`] : [];

/** Sends `count` GET requests on kept-alive connections, `concurrency` at a time; resolves to the statuses seen. */
export async function drive(url, headers, count, concurrency = 4) {
  const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
  const statuses = {};
  let sent = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      request(url, { agent, headers }, (res) => {
        statuses[res.statusCode] = (statuses[res.statusCode] ?? 0) + 1;
        res.resume().on('end', resolve);
      })
        .on('error', reject)
        .end();
    });
  const worker = async () => {
    while (sent < count) {
      sent++;
      await one();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  agent.destroy();
  return statuses;
}

// valgrind names its control pipes after HOST, which startNode sets for the server.
const control = (command, server) =>
  execFileSync('callgrind_control', [command, String(server.child.pid)], {
    env: { ...process.env, HOST: '127.0.0.1' },
    stdio: 'ignore',
  });

/**
 * Instructions of one window in calls to V8's runtime for an object literal's computed key.
 * Some processes build process.nextTick's tick object there, for their whole life (about 38 k
 * instructions per request on the unknown path, against under 2 k in the others; bench/RESULTS.md,
 * "A state some services fall into"): counts compare only between processes in the same state.
 */
function literalRuntime(dump) {
  let total = 0;
  let callee = '';
  let costFollows = false;
  for (const line of dump.split('\n')) {
    if (costFollows) {
      costFollows = false;
      if (callee.includes('Runtime_DefineKeyedOwnPropertyInLiteral')) total += Number(line.split(' ')[1]);
    } else if (line.startsWith('cfn=')) callee = line;
    else if (line.startsWith('calls=')) costFollows = true;
  }
  return total;
}

/** What the process has run since its counters were last zeroed (callgrind's dump): all instructions, and those of literalRuntime. */
function instructionsSinceZero(server, dumps) {
  const pid = server.child.pid;
  const before = new Set(readdirSync(dumps));
  control('--dump', server);
  const file = readdirSync(dumps).find((name) => !before.has(name) && name.startsWith(`callgrind.${pid}.`));
  const dump = readFileSync(join(dumps, file), 'utf8');
  return { instructions: Number(/^summary: (\d+)/m.exec(dump)[1]), literal: literalRuntime(dump) };
}

/**
 * Drives `server` with `warmUp` ([path, headers] pairs, `warmRequests` each), then `windows`
 * windows of `requests` requests on `path`, its counters zeroed before each window and read
 * after it. Resolves to the instructions per request of each window, the statuses of the last,
 * and whether the process is in the slow state (literalRuntime over 10 k a request; a process
 * that is not runs under 2 k there).
 */
export async function countWindows(server, { dumps, path, headers, warmUp, warmRequests, windows, requests }) {
  for (const [p, h] of warmUp) await drive(server.url + p, h, warmRequests);
  const perRequest = [];
  const literal = [];
  let statuses;
  for (let w = 0; w < windows; w++) {
    control('--zero', server);
    statuses = await drive(server.url + path, headers, requests);
    const counted = instructionsSinceZero(server, dumps);
    perRequest.push(counted.instructions / requests);
    literal.push(counted.literal / requests);
  }
  const literalPerRequest = median(literal);
  return {
    perRequest,
    statuses,
    pid: server.child.pid,
    slowLiteral: literalPerRequest > 10_000,
    literal: literalPerRequest,
  };
}

/** One process's windows as a line of the report. */
export const windowsLine = (r) =>
  `${r.perRequest.map((n) => (n / 1000).toFixed(1)).join(', ')} (pid ${r.pid}; ` +
  `tick literal in V8's runtime: ${(r.literal / 1000).toFixed(1)} k${r.slowLiteral ? ', SLOW STATE' : ''})`;
