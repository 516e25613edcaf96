// Memory of the compiled server (npm run build first) under a burst of image uploads: N users
// each send one 5 MiB image at the same moment, on a PostgreSQL database of its own (created,
// then dropped). Reports the answers and the server's resident memory before, at its peak
// during the burst, and 5 and 30 seconds after it.
//
//   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node bench/upload-burst.mjs
//   BURST_UPLOADS=50 UPLOAD_CONCURRENCY=4 …
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import pg from 'pg';
import { rssMb } from './lib/processes.mjs';
import { serveCommand } from './lib/service.mjs';

const UPLOADS = Number(process.env.BURST_UPLOADS ?? 50);
const serverUrl = process.env.DATABASE_URL;
if (!serverUrl) {
  console.error('Set DATABASE_URL to a PostgreSQL server (e.g. postgres://postgres@127.0.0.1:5432/postgres).');
  process.exit(2);
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const freePort = () =>
  new Promise((done) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => done(port));
    });
  });
async function admin(sql) {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

const db = `burst_${randomBytes(4).toString('hex')}`;
await admin(`CREATE DATABASE "${db}"`);
const dbUrl = new URL(serverUrl);
dbUrl.pathname = `/${db}`;
const port = await freePort();
// As `npm run serve` starts it.
const serve = serveCommand('.');
const server = spawn(process.execPath, [...serve.flags, 'dist/src/main.js'], {
  env: {
    ...process.env,
    ...serve.env,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    DATABASE_URL: dbUrl.toString(),
    JWT_SECRET: randomBytes(32).toString('hex'),
    BCRYPT_COST: '4',
    SIGNUP_RATE_LIMIT: '100000',
    SEED_SAMPLE_DATA: 'false',
  },
  stdio: ['ignore', 'ignore', 'inherit'],
});
const base = `http://127.0.0.1:${port}`;
try {
  for (let i = 0; ; i++) {
    try {
      if ((await fetch(`${base}/health`)).ok) break;
    } catch {}
    if (i > 300) throw new Error('server did not start');
    await sleep(100);
  }

  const post = (path, body, headers = {}) =>
    fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
  const users = [];
  for (let i = 0; i < UPLOADS; i++) {
    const email = `burst-${i}-${randomBytes(4).toString('hex')}@example.com`;
    const password = 'burst-password-1';
    await post('/user/signup', { email, password, name: `Burst ${i}` });
    const { token } = await (await post('/auth/token', { email, password })).json();
    const authorization = `Bearer ${token}`;
    const { id } = await (await post('/planets', { name: `Burst ${i}` }, { authorization })).json();
    users.push({ authorization, planetId: id });
  }
  // A PNG header and then filler up to the limit: accepted, as images are never decoded.
  const png = readFileSync(new URL('../test/fixtures/mars.png', import.meta.url));
  const image = Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024 - png.length, 0x20)]);

  await sleep(2000);
  const before = rssMb(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server.pid))), 20);
  const started = Date.now();
  const statuses = await Promise.all(
    users.map(async ({ authorization, planetId }) => {
      const form = new FormData();
      form.append('image', new Blob([image], { type: 'image/png' }), 'big.png');
      const res = await fetch(`${base}/planets/${planetId}/image`, {
        method: 'POST',
        headers: { authorization },
        body: form,
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  const took = Date.now() - started;
  const atEnd = rssMb(server.pid);
  await sleep(5000);
  const after5 = rssMb(server.pid);
  await sleep(25000);
  clearInterval(sampler);
  const after30 = rssMb(server.pid);
  const counts = Object.entries(statuses.reduce((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {}));
  console.log(
    `${UPLOADS} uploads of 5 MiB at once, UPLOAD_CONCURRENCY=${process.env.UPLOAD_CONCURRENCY ?? 4}: ${counts.map(([s, n]) => `${n} × ${s}`).join(', ')} in ${took} ms`,
  );
  console.log(
    `rss MB: before ${before.toFixed(0)}, peak ${peak.toFixed(0)}, at the end ${atEnd.toFixed(0)}, 5 s later ${after5.toFixed(0)}, 30 s later ${after30.toFixed(0)}`,
  );
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
  await admin(`DROP DATABASE IF EXISTS "${db}" WITH (FORCE)`);
}
