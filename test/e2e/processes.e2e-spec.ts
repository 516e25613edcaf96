import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';

import { jest } from '@jest/globals';

import { loadConfig } from '../../src/config/app-config';
import { DataDirInUseError, DataDirLock } from '../../src/database/data-dir-lock';
import { openDatabase } from '../../src/database/data-source';
import { runCliInProcess } from '../support/cli';
import { expectProblem } from '../support/problems';
import { freePort, runProcess, startProcess } from '../support/processes';
import { startTestApp } from '../support/test-app';
import { createTestDatabase, migratedDataDir, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * The server and the operator CLI as real processes (compiled by the global setup), the
 * way an operator runs them.
 */
jest.setTimeout(120_000);

const SERVER = 'dist/src/main.js';
const CLI = 'dist/src/cli.js';

let dataDir: string;
beforeEach(() => {
  dataDir = migratedDataDir('rk-proc-');
});
afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

const api = (port: number, path: string, key?: string) =>
  fetch(`http://127.0.0.1:${port}${path}`, { headers: key ? { 'x-api-key': key } : {} });

describe('the embedded database directory', () => {
  // A second process is refused in 'start and stop' below, next to the server it runs beside.
  it('refuses a second open within one process too', () => {
    const lock = DataDirLock.acquire(dataDir);
    try {
      expect(() => DataDirLock.acquire(dataDir)).toThrow(DataDirInUseError);
    } finally {
      lock.release();
    }
    // Released: it can be taken again.
    DataDirLock.acquire(dataDir).release();
  });
});

describe('start and stop', () => {
  // One server start serves both: a start costs seconds of CPU, and the refusal needs a running server anyway.
  it('prints a first key once on a fresh database, refuses a second process on its DATA_DIR, keeps data across restarts, and shuts down cleanly on SIGTERM', async () => {
    const port = await freePort();
    // A generous grace period: closing the embedded database writes it out, which can take
    // seconds on a busy machine; the test is about finishing cleanly, not about speed.
    const env = {
      DATA_DIR: dataDir,
      PORT: String(port),
      NODE_ENV: 'development',
      LOG_LEVEL: 'info',
      SHUTDOWN_GRACE_MS: '60000',
    };
    const server = startProcess(SERVER, [], env);
    const [, key] = await server.waitFor(/X-API-Key: (rk_\w+)/);
    await server.waitFor(/Server listening/);
    expect(server.stdout()).toContain('FIRST START');
    // The banner goes to stdout once; no log line carries the key.
    const logLines = server
      .stdout()
      .split('\n')
      .filter((l) => l.startsWith('{'));
    expect(logLines.join('\n')).not.toContain(key);
    expect((await api(port, '/auth/regions/me', key)).status).toBe(200);

    // A second server and the CLI on the same DATA_DIR are refused with a clear message, and
    // the first one keeps working.
    const second = await runProcess(SERVER, [], {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      LOG_LEVEL: 'warn',
    });
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/DATA_DIR .* is in use by another process \(pid \d+\)/);
    const cli = await runProcess(CLI, ['region', 'list'], { DATA_DIR: dataDir });
    expect(cli.code).toBe(1);
    expect(cli.stderr).toMatch(/in use by another process/);
    expect((await api(port, '/auth/regions/me', key)).status).toBe(200);

    const inFlight = Array.from({ length: 20 }, () => api(port, '/auth/regions/me', key));
    server.child.kill('SIGTERM');
    const statuses = await Promise.all(
      inFlight.map((p) =>
        p.then(
          (r) => r.status,
          () => 'refused',
        ),
      ),
    );
    expect(statuses.filter((s) => s !== 200 && s !== 'refused')).toEqual([]);
    const exitCode = await server.exited;
    expect({ exitCode, log: exitCode === 0 ? '' : server.stdout().slice(-3000) + server.stderr() }).toEqual({
      exitCode: 0,
      log: '',
    });
    expect(existsSync(join(dataDir, 'postmaster.lock'))).toBe(false);

    // The second start finds the region: no new banner, the same key still works.
    const again = startProcess(SERVER, [], { ...env, PORT: String(await freePort()) });
    try {
      await again.waitFor(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/);
      const [, port2] = again.stdout().match(/Server listening at http:\/\/127\.0\.0\.1:(\d+)/)!;
      expect(again.stdout()).not.toContain('FIRST START');
      expect((await api(Number(port2), '/auth/regions/me', key)).status).toBe(200);
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  });

  it('in production without INITIAL_REGION_API_KEY, creates no key and logs how to make one', async () => {
    const server = startProcess(SERVER, [], {
      DATA_DIR: dataDir,
      PORT: String(await freePort()),
      NODE_ENV: 'production',
      DATABASE_URL: 'embedded',
      JWT_SECRET: 'a-production-secret-of-at-least-32-characters',
    });
    try {
      await server.waitFor(/region create/);
      expect(server.stdout()).not.toContain('X-API-Key:');
      expect(server.stdout()).not.toMatch(/rk_\w{49}/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('starts with an operator-chosen key from `cli key generate`, and that key works', async () => {
    const generated = await runProcess(CLI, ['key', 'generate', '--json'], { DATA_DIR: dataDir });
    expect(generated.code).toBe(0);
    const { key } = JSON.parse(generated.stdout) as { key: string };
    expect(key).toMatch(/^rk_[0-9A-Za-z]{49}$/);
    const port = await freePort();
    const server = startProcess(SERVER, [], {
      DATA_DIR: dataDir,
      PORT: String(port),
      NODE_ENV: 'production',
      DATABASE_URL: 'embedded',
      JWT_SECRET: 'a-production-secret-of-at-least-32-characters',
      INITIAL_REGION_API_KEY: key,
      INITIAL_REGION_NAME: 'Operator region',
    });
    try {
      await server.waitFor(/Server listening/);
      const res = await api(port, '/auth/regions/me', key);
      expect(res.status).toBe(200);
      expect(((await res.json()) as { name: string }).name).toBe('Operator region');
      expect(server.stdout()).not.toContain(key);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  // Every bad variable is named in one message (the unit tests of loadConfig check each alone):
  // two starts cover them all, the second for a key of the right shape with a wrong checksum,
  // which would never authenticate.
  it.each([
    [
      {
        PORT: 'not-a-port',
        DATABASE_URL: 'mysql://localhost/db',
        INITIAL_REGION_API_KEY: 'short',
        JWT_SECRET: 'short',
      },
    ],
    [{ INITIAL_REGION_API_KEY: `rk_${'a'.repeat(49)}` }],
  ])('stops at start when a variable is bad, naming each bad one: %j', async (bad) => {
    const result = await runProcess(SERVER, [], { DATA_DIR: dataDir, ...bad });
    expect(result.code).toBe(1);
    for (const name of Object.keys(bad)) expect(result.stderr).toContain(`${name}=`);
  });
});

describe('operator CLI', () => {
  let db: TestDatabase;
  let dbEnv: Record<string, string>;
  beforeEach(async () => {
    db = await createTestDatabase();
    dbEnv = usesPostgresServer() ? db.env : { DATA_DIR: dataDir };
  });
  afterEach(async () => db.drop());

  // The first command as a process, for its stdout holding exactly the JSON object; the rest
  // run the CLI's code in this process (runCliInProcess), which writes to the same streams.
  it('creates a region with --json as exactly one JSON object, and the key works', async () => {
    const created = await runProcess(
      CLI,
      ['region', 'create', '--name', 'Utrecht', '--description', 'Planner', '--json'],
      dbEnv,
    );
    expect(created.code).toBe(0);
    const output = JSON.parse(created.stdout);
    expect(created.stdout.trim().split('\n')).toHaveLength(1);
    expect(output).toEqual({
      region: { id: expect.any(String), name: 'Utrecht' },
      apiKey: {
        id: expect.any(String),
        key: expect.stringMatching(/^rk_/),
        tokenPreview: expect.any(String),
        description: 'Planner',
        permissions: ['region:read', 'keys:write'],
        allowedCidrs: null,
        expiresAt: null,
        rateLimit: null,
      },
    });

    const list = await runCliInProcess(['region', 'list', '--json'], dbEnv);
    expect(JSON.parse(list.stdout).regions).toEqual([
      expect.objectContaining({ id: output.region.id, name: 'Utrecht' }),
    ]);

    const expiresAt = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const key = await runCliInProcess(
      ['key', 'create', '--region', output.region.id, '--expires-at', expiresAt, '--rate-limit', '30/60', '--json'],
      dbEnv,
    );
    expect(key.code).toBe(0);
    // The shape of region create's, as operations.md documents for both.
    expect(JSON.parse(key.stdout)).toEqual({
      region: output.region,
      apiKey: expect.objectContaining({
        id: expect.any(String),
        key: expect.stringMatching(/^rk_/),
        expiresAt,
        rateLimit: { requests: 30, perSeconds: 60 },
      }),
    });
    const second = JSON.parse(key.stdout).apiKey.key;

    // Both changes are in the region's events, made by an operator, newest first.
    const events = await runCliInProcess(['region', 'events', '--region', output.region.id, '--json'], dbEnv);
    expect(events.code).toBe(0);
    expect(JSON.parse(events.stdout).events).toEqual([
      expect.objectContaining({
        type: 'api_key.created',
        actor: { type: 'operator' },
        apiKey: expect.objectContaining({ id: JSON.parse(key.stdout).apiKey.id }),
      }),
      expect.objectContaining({
        type: 'region.created',
        actor: { type: 'operator' },
        apiKey: expect.objectContaining({ id: output.apiKey.id, tokenPreview: output.apiKey.tokenPreview }),
      }),
    ]);
    const text = await runCliInProcess(['region', 'events', '--region', output.region.id], dbEnv);
    expect(text.stdout.trim().split('\n')).toEqual([
      expect.stringMatching(/api_key\.created .* by operator$/),
      expect.stringMatching(/region\.created .* by operator$/),
    ]);

    const t = await startTestApp(dbEnv.DATA_DIR ? { DATA_DIR: dataDir } : {}, {
      env: dbEnv,
      drop: async () => undefined,
    });
    try {
      for (const k of [output.apiKey.key, second]) {
        const res = await t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': k } });
        expect(res.statusCode).toBe(200);
        expect(res.json().name).toBe('Utrecht');
      }
    } finally {
      await t.close();
    }
  });

  it('refuses names and descriptions the API refuses: control characters, line breaks, bidi overrides', async () => {
    const refusals = [
      ['region', 'create', '--name', 'Utrecht\nForged line'],
      ['region', 'create', '--name', 'Utrecht \u001b[31mred'],
      ['region', 'create', '--name', 'Utrecht', '--description', 'Planner \u202Eevil'],
      ['key', 'create', '--region', '5d7c2f1a-0b6e-4b8e-9a53-5f2a3c1d9e70', '--description', 'a\u200Bb'],
    ];
    // The first as a process, for its exit code and stderr; the rest in this process.
    for (const [index, args] of refusals.entries()) {
      const refused = index === 0 ? await runProcess(CLI, args, dbEnv) : await runCliInProcess(args, dbEnv);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/^error: --(name|description): One line of visible text: no control characters/);
    }
    const list = await runCliInProcess(['region', 'list', '--json'], dbEnv);
    expect(JSON.parse(list.stdout).regions).toEqual([]);
  });

  it('prints the control characters of rows that already hold them as escapes, in text and JSON alike', async () => {
    const name = 'Utrecht\nForged line \u001b[31mred\u001b[0m \u202Eevil\u0085';
    const { dataSource, embedded } = await openDatabase(loadConfig({ NODE_ENV: 'test', ...dbEnv }));
    try {
      await dataSource.initialize();
      await dataSource.query(`INSERT INTO regions (id, name) VALUES ('5d7c2f1a-0b6e-4b8e-9a53-5f2a3c1d9e70', $1)`, [
        name,
      ]);
    } finally {
      if (dataSource.isInitialized) await dataSource.destroy();
      await embedded?.stop();
    }
    const text = await runCliInProcess(['region', 'list'], dbEnv);
    expect(text.code).toBe(0);
    expect(text.stdout).toBe(
      '5d7c2f1a-0b6e-4b8e-9a53-5f2a3c1d9e70  Utrecht\\u000AForged line \\u001B[31mred\\u001B[0m \\u202Eevil\\u0085\n',
    );
    const json = await runCliInProcess(['region', 'list', '--json'], dbEnv);
    // Printable ASCII only: the name is, but for the characters escaped.
    expect(json.stdout.trim()).toMatch(/^[\x20-\x7e]*$/);
    expect(JSON.parse(json.stdout).regions[0].name).toBe(name);
  });

  it('creates keys with --permission and --allow-cidr (repeatable), records the grant, and the server enforces it', async () => {
    const created = await runCliInProcess(
      ['region', 'create', '--name', 'Leiden', '--allow-cidr', '192.0.2.0/24', '--json'],
      dbEnv,
    );
    expect(created.code).toBe(0);
    const region = JSON.parse(created.stdout);
    expect(region.apiKey).toMatchObject({ permissions: ['region:read', 'keys:write'], allowedCidrs: ['192.0.2.0/24'] });

    const made = await runCliInProcess(
      [
        'key',
        'create',
        '--region',
        region.region.id,
        '--permission',
        'region:read',
        '--allow-cidr',
        '2001:DB8:0::/32',
        '--allow-cidr',
        '198.51.100.7',
        '--json',
      ],
      dbEnv,
    );
    expect(made.code).toBe(0);
    const reader = JSON.parse(made.stdout).apiKey;
    expect(reader).toMatchObject({ permissions: ['region:read'], allowedCidrs: ['2001:db8::/32', '198.51.100.7/32'] });

    const text = await runCliInProcess(['region', 'events', '--region', region.region.id], dbEnv);
    expect(text.stdout).toContain('grants region:read from 2001:db8::/32,198.51.100.7/32');

    const t = await startTestApp(dbEnv.DATA_DIR ? { DATA_DIR: dataDir } : {}, {
      env: dbEnv,
      drop: async () => undefined,
    });
    try {
      const get = (key: string, remoteAddress: string) =>
        t.request({ method: 'GET', url: '/auth/regions/me', headers: { 'x-api-key': key }, remoteAddress });
      expect((await get(reader.key, '2001:db8::5')).statusCode).toBe(200);
      expect((await get(reader.key, '192.0.2.1')).statusCode).toBe(403);
      expect((await get(region.apiKey.key, '192.0.2.1')).statusCode).toBe(200);
      expect((await get(region.apiKey.key, '198.51.100.7')).statusCode).toBe(403);
      const write = await t.request({
        method: 'POST',
        url: '/auth/region/api-keys',
        headers: { 'x-api-key': reader.key },
        payload: {},
        remoteAddress: '2001:db8::5',
      });
      expectProblem(write, 403, 'insufficient-permission');
    } finally {
      await t.close();
    }
  });

  it.each([
    [
      ['key', 'create', '--region', '00000000-0000-4000-8000-000000000000', '--permission', 'admin'],
      /--permission must be one of region:read, keys:write/,
      2,
    ],
    [
      ['key', 'create', '--region', '00000000-0000-4000-8000-000000000000', '--allow-cidr', '192.0.2.0/33'],
      /--allow-cidr .* prefix length/,
      2,
    ],
    [
      ['key', 'create', '--region', '00000000-0000-4000-8000-000000000000', '--expires-at', 'tomorrow'],
      /--expires-at must be an RFC 3339 date-time/,
      2,
    ],
    [
      ['key', 'create', '--region', '00000000-0000-4000-8000-000000000000', '--expires-at', '2020-01-01T00:00:00Z'],
      /--expires-at: expiresAt must be at least 60 seconds/,
      2,
    ],
    [
      ['key', 'create', '--region', '00000000-0000-4000-8000-000000000000', '--rate-limit', '600/0'],
      /--rate-limit must be <requests>\/<seconds>, such as 600\/60/,
      2,
    ],
    [['region', 'create', '--name', 'x', '--permission', 'region:read'], /first key holds every permission/, 2],
    [['region', 'create'], /--name is required/, 2],
    [['region', 'create', '--name', '   '], /--name is required/, 2],
    [['region', 'create', '--name', 'x'.repeat(101)], /at most 100/, 2],
    [['key', 'create', '--region', 'not-a-uuid'], /must be a region id/, 2],
    [['key', 'create', '--region', '00000000-0000-4000-8000-000000000000'], /No region with id/, 1],
    [['region', 'events'], /--region is required/, 2],
    [['region', 'events', '--region', '00000000-0000-4000-8000-000000000000'], /No region with id/, 1],
    [['region', 'explode'], /Unknown command/, 2],
    [['region', 'create', '--nme', 'typo'], /Unknown option/, 2],
    // An option another command takes: `region create --region <id>` would otherwise make a new region.
    [
      ['region', 'create', '--name', 'x', '--region', '00000000-0000-4000-8000-000000000000'],
      /`region create` takes no --region/,
      2,
    ],
    [
      ['migration', 'show', '--name', 'x', '--permission', 'admin'],
      /`migration show` takes no --name, --permission/,
      2,
    ],
    [[], /No command given/, 2],
  ])('reports %j on stderr with a non-zero exit', async (args, message, code) => {
    // In this process: the refusals test above runs one as a process, for its exit code.
    const result = await runCliInProcess(args, dbEnv);
    expect(result.code).toBe(code);
    expect(result.stderr).toMatch(message);
    expect(result.stdout).toBe('');
  });
});
