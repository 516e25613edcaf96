import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
} from 'node:fs';
import { createServer, Server } from 'node:http';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, posix, resolve } from 'node:path';

import { jest } from '@jest/globals';

import { readStages, Stage, stageChain, Step } from '../support/dockerfile';
import { freePort, RunningProcess, runProcess, startProcess } from '../support/processes';
import { createTestDatabase, TestDatabase, usesPostgresServer } from '../support/test-database';

/**
 * The image without Docker: the final stage of the Dockerfile, read from the Dockerfile
 * itself and replayed step by step into an empty folder (its COPY lines, its `npm ci`, its
 * ENV), then started with its CMD on this test's Node, which is the image's Node version.
 * What the image would hold is what runs here, so a production dependency that is really
 * a devDependency, or a file dist/ needs and the image lacks, fails this suite. Its `npm ci`
 * is made once for the inputs that decide its result (see installPackages).
 */
jest.setTimeout(180_000);

const ROOT = resolve('.');
const FINAL_STAGE = 'production';
const stages = readStages(join(ROOT, 'Dockerfile'));
const image = stageChain(stages, FINAL_STAGE);
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { dev?: boolean }>;
};

interface Install {
  dir: string;
  env: Record<string, string>;
  cmd: string[];
}

let install: Install;

beforeAll(async () => {
  install = await replay(image.steps, mkdtempSync(join(tmpdir(), 'rk-image-')));
}, 600_000);
afterAll(() => rmSync(install.dir, { recursive: true, force: true }));

describe('the Dockerfile', () => {
  it('builds on the Node version the tests run on, in a slim Debian image', () => {
    expect(stages.at(-1)?.name).toBe(FINAL_STAGE);
    expect(image.image).toBe(`node:${process.versions.node}-bookworm-slim`);
    // The build stage starts from the same base, so dist/ is compiled on that Node too.
    expect(stageChain(stages, 'build').image).toBe(image.image);
  });

  it('runs as an unprivileged user, stops on SIGTERM and exposes the API and metrics ports', () => {
    const last = (keyword: string) => image.steps.filter((s) => s.keyword === keyword).at(-1);
    expect(last('USER')?.text).toBe('node');
    expect(last('STOPSIGNAL')?.text).toBe('SIGTERM');
    expect(last('EXPOSE')?.text.split(' ')).toEqual(['3000', '9464']);
    expect(image.steps.filter((s) => s.keyword === 'ENTRYPOINT')).toEqual([]);
  });

  it('starts the server as `npm run serve` does, with node itself as the process', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    // `NAME=value ... node <flags> dist/src/main.js`: the variables are the image's ENV.
    const words = pkg.scripts.serve.split(' ');
    const node = words.indexOf('node');
    expect(install.cmd).toEqual(words.slice(node));
    const assignments = Object.fromEntries(words.slice(0, node).map((word) => word.split('=')));
    expect(Object.keys(assignments)).toEqual(['MALLOC_ARENA_MAX']);
    expect(install.env).toMatchObject(assignments);
  });

  it('keeps everything it copies from the build context inside the .dockerignore allowlist', () => {
    const allowed = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('!'))
      .map((line) => line.slice(1).replace(/\/$/, ''));
    const copied = stages
      .flatMap((s: Stage) => s.steps)
      .filter((s) => s.keyword === 'COPY' && !s.flags.from)
      .flatMap((s) => s.copy!.sources.map((source) => source.replace(/\/$/, '')));
    expect(copied.filter((source) => !allowed.includes(source))).toEqual([]);
  });
});

describe('a production install made as the image makes it', () => {
  it('holds no package that only development needs', () => {
    const devOnly = Object.entries(lock.packages)
      .filter(([path, entry]) => path !== '' && entry.dev)
      .map(([path]) => path);
    expect(devOnly.length).toBeGreaterThan(100);
    expect(devOnly.filter((path) => existsSync(join(install.dir, path)))).toEqual([]);
    for (const name of ['jest', 'ts-jest', 'typescript', 'node', '@nestjs/cli', '@nestjs/testing']) {
      expect({ name, installed: existsSync(join(install.dir, 'node_modules', name)) }).toEqual({
        name,
        installed: false,
      });
    }
  });

  describe.each(databases())('on a fresh %s', (_label, makeDatabase) => {
    let database: Database;
    beforeAll(async () => {
      database = await makeDatabase();
    });
    afterAll(() => database.drop());

    it('migrates, creates the first region, serves, and stops cleanly on SIGTERM; the CLI then runs, migrations included', async () => {
      const key = `initial-${randomBytes(24).toString('base64url')}`;
      const port = await freePort();
      const env = {
        ...install.env,
        ...database.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        JWT_SECRET: randomBytes(32).toString('hex'),
        INITIAL_REGION_NAME: 'Image region',
        INITIAL_REGION_API_KEY: key,
        LOG_LEVEL: 'warn',
        // Closing the embedded database writes it out, which can take seconds on a busy machine.
        SHUTDOWN_GRACE_MS: '60000',
        // The image waits for a balancer to stop sending after SIGTERM; no balancer here.
        SHUTDOWN_DELAY_MS: '0',
      };
      const [node, ...nodeArgs] = install.cmd;
      expect(node).toBe('node');
      const script = nodeArgs.at(-1)!;
      const server = startProcess(script, [], env, { cwd: install.dir, nodeFlags: nodeArgs.slice(0, -1) });
      try {
        await waitForHealth(port, server);
        const me = await fetch(`http://127.0.0.1:${port}/auth/regions/me`, { headers: { 'x-api-key': key } });
        expect(me.status).toBe(200);
        expect(await me.json()).toMatchObject({ name: 'Image region' });
        // A sign-up hashes with bcrypt: its native binary came with the install.
        const signup = await fetch(`http://127.0.0.1:${port}/user/signup`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Ada', email: 'ada@example.com', password: 'correct horse battery' }),
        });
        expect(signup.status).toBe(201);
        // The image's own HEALTHCHECK passes against the real server.
        expect(await runHealthcheck(port)).toBe(0);
      } finally {
        server.child.kill('SIGTERM');
      }
      const exitCode = await server.exited;
      expect({ exitCode, stderr: server.stderr() }).toEqual({ exitCode: 0, stderr: '' });

      const cli = await runProcess('dist/src/cli.js', ['region', 'list', '--json'], env, { cwd: install.dir });
      expect({ code: cli.code, stderr: cli.stderr }).toEqual({ code: 0, stderr: '' });
      const { regions } = JSON.parse(cli.stdout) as { regions: { name: string }[] };
      expect(regions.map((r) => r.name)).toEqual(['Image region']);

      // The upgrade and rollback steps of docs/operations.md, from the installed build: nothing
      // is rebuilt or deleted, and the server starts again on the schema put back.
      const migration = async (command: string) => {
        const run = await runProcess('dist/src/cli.js', ['migration', command, '--json'], env, { cwd: install.dir });
        expect({ code: run.code, stderr: run.stderr }).toEqual({ code: 0, stderr: '' });
        return JSON.parse(run.stdout) as Record<string, unknown>;
      };
      const shown = (await migration('show')) as { applied: string[]; pending: string[]; unknown: string[] };
      expect(shown.applied.length).toBeGreaterThan(1);
      expect([shown.pending, shown.unknown]).toEqual([[], []]);
      expect(await migration('revert')).toEqual({ reverted: shown.applied.at(-1) });
      expect(await migration('show')).toMatchObject({ pending: [shown.applied.at(-1)] });
      expect(await migration('run')).toEqual({ applied: [shown.applied.at(-1)] });
      expect(existsSync(join(install.dir, 'dist', 'src', 'main.js'))).toBe(true);
    });
  });
});

/** Runs the image's HEALTHCHECK command with PORT set; resolves to its exit code. */
function runHealthcheck(onPort: number): Promise<number | null> {
  const healthcheck = image.steps.filter((s) => s.keyword === 'HEALTHCHECK').at(-1);
  const [node, ...args] = healthcheck!.exec!;
  expect(node).toBe('node');
  return new Promise<number | null>((done) => {
    const child = spawn(process.execPath, args, { env: { PATH: '', PORT: String(onPort) }, stdio: 'ignore' });
    child.once('exit', (code) => done(code));
  });
}

describe('the HEALTHCHECK command', () => {
  let server: Server;
  let port: number;
  let answer = 200;
  const paths: string[] = [];

  beforeAll(async () => {
    // A stand-in for the server: the command's behaviour, not the service's, is tested here.
    server = createServer((req, res) => {
      paths.push(req.url ?? '');
      res.writeHead(answer).end();
    });
    port = await freePort();
    await new Promise<void>((done) => server.listen(port, '127.0.0.1', done));
  });
  afterAll(() => new Promise<void>((done) => server.close(() => done())));

  const check = runHealthcheck;

  it('asks GET /health/live on PORT and passes on 200', async () => {
    answer = 200;
    expect(await check(port)).toBe(0);
    expect(paths.at(-1)).toBe('/health/live');
  });

  it('fails on 503 and when nothing listens', async () => {
    answer = 503;
    expect(await check(port)).toBe(1);
    expect(await check(await freePort())).toBe(1);
  });
});

interface Database {
  env: Record<string, string>;
  drop(): Promise<void>;
}

function databases(): [string, () => Promise<Database>][] {
  const embedded = async (): Promise<Database> => {
    const dataDir = mkdtempSync(join(tmpdir(), 'rk-image-data-'));
    // Production asks for the embedded database by name, as docs/operations.md shows for the image.
    return {
      env: { DATABASE_URL: 'embedded', DATA_DIR: dataDir },
      drop: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  };
  const server = async (): Promise<Database> => {
    const db: TestDatabase = await createTestDatabase();
    return db;
  };
  return usesPostgresServer()
    ? [
        ['embedded database', embedded],
        ['PostgreSQL server database', server],
      ]
    : [['embedded database', embedded]];
}

/**
 * Replays the stage's steps into `dir`. Steps that change no file (USER, EXPOSE, ...) are
 * kept for the assertions above; a step this function does not know fails the suite, so the
 * Dockerfile cannot gain a step this test silently skips.
 */
async function replay(steps: Step[], dir: string): Promise<Install> {
  let workdir = '/';
  const env: Record<string, string> = {};
  let cmd: string[] = [];
  const into = (destination: string) => join(dir, posix.relative(workdir, posix.resolve(workdir, destination)));
  for (const step of steps) {
    const where = `Dockerfile line ${step.line} (${step.keyword} ${step.text})`;
    switch (step.keyword) {
      case 'WORKDIR':
        workdir = posix.resolve(workdir, step.text);
        break;
      case 'ENV':
        Object.assign(env, step.env);
        break;
      case 'COPY': {
        const from = step.flags.from;
        if (from !== undefined && from !== 'build') throw new Error(`${where}: copies from an unknown stage`);
        for (const source of step.copy!.sources) {
          // The build stage's WORKDIR is this checkout, where the global setup compiled dist/.
          const origin = from ? join(ROOT, posix.relative(workdir, source)) : join(ROOT, source);
          const target = step.copy!.destination.endsWith('/')
            ? join(into(step.copy!.destination), posix.basename(source))
            : into(step.copy!.destination);
          cpSync(origin, target, { recursive: true });
        }
        break;
      }
      case 'RUN':
        if (Object.keys(step.flags).some((flag) => flag !== 'mount')) throw new Error(`${where}: unknown flag`);
        for (const command of step.text.split('&&').map((c) => c.trim())) await runCommand(command, dir, where);
        break;
      case 'CMD':
        cmd = step.exec ?? [];
        break;
      case 'USER':
      case 'EXPOSE':
      case 'STOPSIGNAL':
      case 'HEALTHCHECK':
        break;
      default:
        throw new Error(`${where}: this test does not know how to reproduce it`);
    }
  }
  return { dir, env, cmd };
}

async function runCommand(command: string, dir: string, where: string): Promise<void> {
  const words = command.split(/\s+/);
  if (words[0] === 'npm' && words[1] === 'ci') {
    await installPackages(words.slice(1), dir);
    return;
  }
  // `install -d -o node -g node <dir>`: the directory; its owner is the image's business.
  if (words[0] === 'install' && words[1] === '-d') {
    mkdirSync(join(dir, words.at(-1)!), { recursive: true });
    return;
  }
  throw new Error(`${where}: this test does not know how to reproduce \`${command}\``);
}

/**
 * Where the trees of earlier `npm ci` runs are kept, one folder for each set of inputs: under
 * the system's temporary folder, as the install itself, with no node_modules above it from
 * which a package missing from the tree could be found.
 */
const INSTALLS = join(tmpdir(), 'rk-production-install');
const DAY_MS = 86_400_000;

/**
 * `npm ci <args>` in `dir`, which holds the package.json and package-lock.json the Dockerfile
 * copied. `npm ci` makes the same tree from the same lockfile, flags, Node and npm, and
 * making it takes most of this suite's time (unpacking thousands of files): the tree is made
 * once for those inputs, in a folder of its own, and `dir` gets it as its node_modules (a
 * link; Node resolves each package inside the one tree). A change to any input, such as a
 * package moved between dependencies and devDependencies, makes a new tree with `npm ci`.
 */
async function installPackages(args: string[], dir: string): Promise<void> {
  const inputs = createHash('sha256')
    .update(JSON.stringify([args, process.version, process.env.npm_config_user_agent ?? '']))
    .update(readFileSync(join(dir, 'package.json')))
    .update(readFileSync(join(dir, 'package-lock.json')));
  const tree = join(INSTALLS, inputs.digest('hex').slice(0, 32));
  if (!existsSync(tree)) {
    mkdirSync(INSTALLS, { recursive: true });
    // Trees of inputs no run has asked for in a day (an older lockfile) are removed.
    for (const old of readdirSync(INSTALLS)) {
      const path = join(INSTALLS, old);
      if (Date.now() - statSync(path).mtimeMs > DAY_MS) rmSync(path, { recursive: true, force: true });
    }
    // Made aside, then renamed into place: a run that finds the folder finds a whole tree.
    const making = mkdtempSync(`${tree}-making-`);
    cpSync(join(dir, 'package.json'), join(making, 'package.json'));
    cpSync(join(dir, 'package-lock.json'), join(making, 'package-lock.json'));
    try {
      await npm(args, making);
      renameSync(making, tree);
    } catch (err) {
      rmSync(making, { recursive: true, force: true });
      // Another run made the same tree meanwhile: use that one.
      if (!existsSync(tree)) throw err;
    }
  }
  const now = new Date();
  utimesSync(tree, now, now);
  symlinkSync(join(tree, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/**
 * The npm that runs this test, on this test's Node (the image's version), with no trace of
 * the checkout: npm's variables from `npm run` would point it at the checkout, and the
 * checkout's node_modules/.bin would lend it the devDependencies' commands.
 */
function npm(args: string[], cwd: string): Promise<string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (value !== undefined && !/^npm_/i.test(name)) env[name] = value;
  }
  const path = (process.env.PATH ?? '').split(delimiter).filter((p) => !p.includes('node_modules'));
  env.PATH = [dirname(process.execPath), ...path].join(delimiter);
  const npmCli = process.env.npm_execpath;
  const [command, commandArgs] = npmCli?.endsWith('.js') ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  return new Promise((done, fail) => {
    const child = spawn(command, commandArgs, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += String(d)));
    child.stderr.on('data', (d) => (output += String(d)));
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? done(output) : fail(new Error(`npm ${args.join(' ')} exited ${code}:\n${output}`)),
    );
  });
}

async function waitForHealth(port: number, server: RunningProcess): Promise<void> {
  for (;;) {
    if (server.child.exitCode !== null) {
      throw new Error(
        `The server exited (${server.child.exitCode}) before it answered /health:\n${server.stdout()}${server.stderr()}`,
      );
    }
    const status = await fetch(`http://127.0.0.1:${port}/health`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 200));
  }
}
