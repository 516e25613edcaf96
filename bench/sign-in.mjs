// `node bench/sign-in.mjs [checkout]`: what a failed sign-in tells and what a flood of them
// costs, on a checkout's built service (this one by default; `npm run build` there first), on
// this machine's PostgreSQL and Redis.
//
// 1. After BCRYPT_COST is raised (accounts made at BENCH_OLD_COST, the service restarted at
//    BENCH_NEW_COST): median time of a wrong password for an existing account against that
//    of an unknown email. Apart, they tell who has an account.
// 2. One address floods sign-in for BENCH_FLOOD_SECONDS, BENCH_FLOOD_IN_FLIGHT attempts at a
//    time, each for another email: median time of a right sign-in from another address
//    meanwhile, against the same alone. Default limits, as production has them.
//
//   node bench/sign-in.mjs                BENCH_SAMPLES=15 BENCH_OLD_COST=8 BENCH_NEW_COST=12
//   node bench/sign-in.mjs ../base        BENCH_FLOOD_SECONDS=8 BENCH_FLOOD_IN_FLIGHT=8
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { generateApiKey } from '../dist/src/region-keys/api-key-codec.js';
import { freePort } from './lib/processes.mjs';
import { fmt, median } from './lib/report.mjs';
import { signUp, withClient } from './lib/seed.mjs';
import { productionEnv, startServed } from './lib/service.mjs';

const env = process.env;
const SAMPLES = Number(env.BENCH_SAMPLES ?? 15);
const OLD_COST = env.BENCH_OLD_COST ?? '8';
const NEW_COST = env.BENCH_NEW_COST ?? '12';
const FLOOD_SECONDS = Number(env.BENCH_FLOOD_SECONDS ?? 8);
const IN_FLIGHT = Number(env.BENCH_FLOOD_IN_FLIGHT ?? 8);
const root = process.argv[2] ? resolve(process.argv[2]) : fileURLToPath(new URL('..', import.meta.url));

const serverUrl = env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `bench_${randomBytes(4).toString('hex')}`;
const databaseUrl = Object.assign(new URL(serverUrl), { pathname: `/${dbName}` }).toString();
const serviceEnv = {
  ...productionEnv({ databaseUrl, jwtSecret: randomBytes(32).toString('hex'), initialKey: generateApiKey() }),
  // Each request says which client it is from, as a proxy would.
  TRUST_PROXY: '1',
};
// Far from any limit: the timing part measures checks, not refusals.
const NO_LIMITS = { LOGIN_FAILURE_LIMIT: '100000', LOGIN_ADDRESS_FAILURE_LIMIT: '100000', SIGNUP_RATE_LIMIT: '100000' };

const start = async (settings) =>
  startServed(root, { env: { ...serviceEnv, METRICS_PORT: String(await freePort()), ...settings } });

/** POST /auth/token from `address`: its status and how long it took, in ms. */
async function signIn(server, email, password, address) {
  const started = performance.now();
  const res = await fetch(`${server.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': address },
    body: JSON.stringify({ email, password }),
  });
  await res.arrayBuffer();
  return { status: res.status, ms: performance.now() - started };
}

const someEmail = () => `nobody-${randomBytes(6).toString('hex')}@example.com`;
const password = `pw-${randomBytes(9).toString('hex')}`;

async function afterCostRaised() {
  let server = await start({ ...NO_LIMITS, BCRYPT_COST: OLD_COST });
  const accounts = [];
  try {
    for (let i = 0; i < 5; i++) {
      const email = someEmail();
      await signUp(server.url, email, password, 'Bench');
      accounts.push(email);
    }
  } finally {
    await server.stop();
  }
  server = await start({ ...NO_LIMITS, BCRYPT_COST: NEW_COST });
  try {
    await signIn(server, someEmail(), 'warm-up', '192.0.2.1');
    const [wrongPassword, unknownEmail] = [[], []];
    for (let i = 0; i < SAMPLES; i++) {
      wrongPassword.push((await signIn(server, accounts[i % accounts.length], 'wrong-password', '192.0.2.1')).ms);
      unknownEmail.push((await signIn(server, someEmail(), 'wrong-password', '192.0.2.1')).ms);
    }
    return { wrongPassword: median(wrongPassword), unknownEmail: median(unknownEmail) };
  } finally {
    await server.stop();
  }
}

async function duringFlood() {
  const server = await start({ BCRYPT_COST: NEW_COST, SIGNUP_RATE_LIMIT: '100000' });
  try {
    const email = someEmail();
    await signUp(server.url, email, password, 'Bench');
    const legit = () => signIn(server, email, password, '198.51.100.1');
    const alone = [];
    for (let i = 0; i < 5; i++) alone.push((await legit()).ms);

    const statuses = {};
    const until = performance.now() + FLOOD_SECONDS * 1000;
    const attacker = async () => {
      while (performance.now() < until) {
        const { status } = await signIn(server, someEmail(), 'wrong-password', '203.0.113.66');
        statuses[status] = (statuses[status] ?? 0) + 1;
      }
    };
    const flood = Promise.all(Array.from({ length: IN_FLIGHT }, attacker));
    const meanwhile = [];
    const timed = (async () => {
      while (performance.now() < until) {
        const { status, ms } = await legit();
        if (status !== 201) throw new Error(`a right sign-in from another address got ${status}`);
        meanwhile.push(ms);
      }
    })();
    await Promise.all([flood, timed]);
    return { alone: median(alone), meanwhile: median(meanwhile), samples: meanwhile.length, statuses };
  } finally {
    await server.stop();
  }
}

await withClient(serverUrl, (db) => db.query(`CREATE DATABASE "${dbName}"`));
try {
  const cost = await afterCostRaised();
  const flood = await duringFlood();
  const answers = Object.entries(flood.statuses)
    .map(([status, n]) => `${n} × ${status}`)
    .join(', ');
  console.log(`Checkout: ${root}`);
  console.log(`BCRYPT_COST ${OLD_COST} -> ${NEW_COST}, medians of ${SAMPLES}:`);
  console.log(`  wrong password (account at cost ${OLD_COST}): ${fmt.ms(cost.wrongPassword)} ms`);
  console.log(`  unknown email:                       ${fmt.ms(cost.unknownEmail)} ms`);
  console.log(`  unknown / wrong password:            ${fmt.ratio(cost.unknownEmail / cost.wrongPassword)}`);
  console.log(`Flood from one address, ${IN_FLIGHT} in flight for ${FLOOD_SECONDS} s: ${answers}`);
  console.log(`  right sign-in from another address, alone:      ${fmt.ms(flood.alone)} ms`);
  console.log(`  the same during the flood (median of ${flood.samples}): ${fmt.ms(flood.meanwhile)} ms`);
} finally {
  await withClient(serverUrl, (db) => db.query(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`)).catch(() => {});
}
