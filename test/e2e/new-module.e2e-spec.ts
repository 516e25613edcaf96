import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { HANDED_DOWN, TEMPLATE_ENV } from '../support/database-templates';
import { usesPostgresServer } from '../support/test-database';

/**
 * `npm run new:module` writes a module that passes every check, in each of its three shapes. It
 * runs on one copy of the repository (the files git tracks or would, as they are in the working
 * tree; node_modules linked; this checkout's compiled dist/ copied, so that the scaffold's build
 * is incremental), three times: a top-level feature, one nested under planets, one that refers to
 * a planet, the last of them building and exporting openapi.json for all three (the first two with
 * NEW_MODULE_EXPORT=later). Then, in the copy: the type check, ESLint and Prettier on what it wrote, the
 * dependency rules, and in one Jest run every suite that checks features (problem examples,
 * route policies, hostile input, locations, the generated client, the OpenAPI document's
 * suites, the soak's list, the service suite) and the new modules' own tests. Every response
 * those tests get is checked against the copy's openapi.json.
 */
// Skipped on the suite's second pass, on the PostgreSQL server (DATABASE_URL): the scaffold does
// not depend on the database, and the first pass, on the embedded one, has run it.
const onFirstPass = usesPostgresServer() ? describe.skip : describe;

/**
 * What a feature changes outside its folder: the list in docs/development.md ("Adding a
 * module", the bullets after "**Outside its folder"), each bullet naming its files in
 * backquotes before its colon, `<feature>` standing for the feature's name.
 */
function OUTSIDE_THE_FOLDER(feature: string): string[] {
  const docs = readFileSync('docs/development.md', 'utf8');
  const start = docs.indexOf('**Outside its folder');
  if (start < 0) throw new Error('docs/development.md: no "**Outside its folder" list');
  const lines = docs.slice(start).split('\n');
  const first = lines.findIndex((line) => line.startsWith('- '));
  const end = lines.findIndex((line, index) => index > first && line.trim() === '');
  const bullets = lines
    .slice(first, end)
    .join('\n')
    .split(/\n(?=- )/);
  return bullets
    .flatMap((bullet) => [...(bullet.split(/`:/)[0] + '`').matchAll(/`([^`]+)`/g)].map((m) => m[1]))
    .map((file) => file.replaceAll('<feature>', feature))
    .sort();
}

/** What it writes in src/<feature>/, top-level or nested alike. */
const IN_THE_FOLDER = (feature: string, singular: string) =>
  [
    `src/${feature}/${feature}.controller.ts`,
    `src/${feature}/${feature}.errors.ts`,
    `src/${feature}/${feature}.module.ts`,
    `src/${feature}/${feature}.repository.ts`,
    `src/${feature}/${feature}.service.ts`,
    `src/${feature}/dto/${singular}-input.dto.ts`,
    `src/${feature}/dto/${singular}-page.dto.ts`,
    `src/${feature}/dto/${singular}.dto.ts`,
    `src/${feature}/entities/${singular}.entity.ts`,
    `src/${feature}/index.ts`,
    `src/${feature}/migrations/<13-digit timestamp>-${feature}.ts`,
  ].sort();

/**
 * The three features the test scaffolds, one of each shape: names no real feature is likely to
 * take (the docs' examples, `observations --parent planets` and `missions --refers-to planets`,
 * a team may well build), so the test keeps working in a checkout that has them.
 */
const TOP = { name: 'scratch-comets', singular: 'scratch-comet', options: [] as string[] };
const NESTED = { name: 'scratch-notes', singular: 'scratch-note', options: ['--parent', 'planets'] };
const REFERRING = { name: 'scratch-visits', singular: 'scratch-visit', options: ['--refers-to', 'planets'] };
const SHAPES = [TOP, NESTED, REFERRING];

/** The suites run on the copy: the new modules' own, and every one that checks features. */
const SUITES = [
  ...SHAPES.flatMap(({ name }) => [`test/unit/${name}.service.spec.ts`, `test/e2e/${name}.e2e-spec.ts`]),
  'test/unit/soak-operations.spec.ts',
  'test/unit/openapi-names.spec.ts',
  'test/unit/openapi-newcomer.spec.ts',
  'test/unit/openapi-validator.spec.ts',
  'test/unit/problem-types.spec.ts',
  'test/e2e/problem-examples.e2e-spec.ts',
  'test/e2e/route-policies.e2e-spec.ts',
  'test/e2e/hostile-input.e2e-spec.ts',
  'test/e2e/locations.e2e-spec.ts',
  'test/e2e/generated-client.e2e-spec.ts',
  'test/e2e/service.e2e-spec.ts',
];

/**
 * Where the copy goes: the same folder on every run from this checkout, so that the Jest run on
 * the copy finds in Jest's cache what it compiled the time before (the cache knows a file by its
 * path and content; compiling everything again costs each worker seconds). A run from this
 * checkout that holds it (its `.lock`, naming a live process) leaves this one a fresh folder.
 */
function copyFolder(): { folder: string; release: () => void } {
  const folder = join(tmpdir(), `new-module-${createHash('sha256').update(resolve('.')).digest('hex').slice(0, 12)}`);
  const lock = `${folder}.lock`;
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  // Claimed by creating the lock ('wx'), so two runs starting together cannot both take it; a
  // lock whose process is gone is taken over.
  const claim = () => {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return true;
    } catch {
      return false;
    }
  };
  const holder = () => {
    try {
      return Number(readFileSync(lock, 'utf8'));
    } catch {
      return Number.NaN; // released meanwhile: nobody holds it
    }
  };
  let claimed = claim();
  if (!claimed && !alive(holder())) {
    rmSync(lock, { force: true });
    claimed = claim();
  }
  if (!claimed) return { folder: mkdtempSync(join(tmpdir(), 'new-module-')), release: () => undefined };
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder);
  return { folder, release: () => rmSync(lock, { force: true }) };
}

onFirstPass('npm run new:module', () => {
  let copy: string;
  let release: () => void = () => undefined;
  /** The Jest run on the copy, started beside the checks. */
  let suites: Promise<{ status: number | null; output: string }> | undefined;

  beforeAll(() => {
    // Real: Jest reports the suites it ran by their real paths.
    const made = copyFolder();
    copy = realpathSync(made.folder);
    release = made.release;
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      encoding: 'utf8',
    });
    for (const file of files.split('\0').filter((f) => f && existsSync(f))) cpSync(file, join(copy, file));
    symlinkSync(resolve('node_modules'), join(copy, 'node_modules'), 'dir');
    // This run's global setup compiled it: the scaffolds' build and the copy's recompile only what they add.
    if (existsSync('dist')) cpSync('dist', join(copy, 'dist'), { recursive: true, preserveTimestamps: true });
  });
  afterAll(async () => {
    await suites;
    rmSync(copy, { recursive: true, force: true });
    release();
  });

  // Not this run's: its database, its worker, its tier, and what else its global setup set
  // (TEST_*). Its embedded templates, though, are handed down (HANDED_DOWN): they hold every
  // migration but the scaffolds', which each app of the copy applies at start; and the copy's
  // dist/ is current, the scaffolds having compiled it. The suites that go over every route
  // (hostile input, problem examples, locations) go over the new features' only (ONLY_FEATURES):
  // this run's own suites check the others. Fewer property runs than the suite's own: here they
  // show that the new routes answer hostile input as the others do, which ten cases per property
  // show; this run's own hostile-input suite does the rest.
  const env = {
    ...Object.fromEntries(
      Object.entries(process.env).filter(
        ([name]) => name !== 'DATABASE_URL' && name !== 'JEST_WORKER_ID' && !name.startsWith('TEST_'),
      ),
    ),
    ...Object.fromEntries(
      [TEMPLATE_ENV.embeddedImage, TEMPLATE_ENV.embeddedDataDir].map((name) => [name, process.env[name] ?? '']),
    ),
    [HANDED_DOWN]: '1',
    PROPERTY_RUNS: '10',
    ONLY_FEATURES: SHAPES.map(({ name }) => name).join(','),
  };
  /** Runs a command in the copy, with `more` in its environment. */
  const runWith = (more: Record<string, string>, command: string, ...args: string[]) => {
    const result = spawnSync(command, args, {
      cwd: copy,
      env: { ...env, ...more },
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    return { status: result.status, output: `${result.stdout}${result.stderr}${result.error ?? ''}` };
  };
  const run = (command: string, ...args: string[]) => runWith({}, command, ...args);
  /** Runs a command in the copy, which must exit 0; if not, the error shows the end of its output. */
  const succeedWith = (more: Record<string, string>, command: string, ...args: string[]) => {
    const { status, output } = runWith(more, command, ...args);
    if (status !== 0) throw new Error(`${[command, ...args].join(' ')} exited with ${status}:\n${output.slice(-8000)}`);
  };
  /** As run(), beside other commands. */
  const runAlongside = (command: string, ...args: string[]) =>
    new Promise<{ status: number | null; output: string }>((done) => {
      const child = spawn(command, args, { cwd: copy, env });
      let output = '';
      child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
      child.on('error', (err) => (output += String(err)));
      child.on('close', (status) => done({ status, output }));
    });
  /** As succeedWith({}), beside other commands. */
  const succeedAlongside = async (command: string, ...args: string[]) => {
    const { status, output } = await runAlongside(command, ...args);
    if (status !== 0) throw new Error(`${[command, ...args].join(' ')} exited with ${status}:\n${output.slice(-8000)}`);
  };
  /** The suites that check features, and the new modules' own, in one Jest run on the copy. */
  const runSuites = () =>
    runAlongside('npm', 'run', 'jest', '--', '--maxWorkers=2', '--json', '--outputFile=jest-results.json', ...SUITES);

  /** The files below `dir`, not following links (node_modules is one). */
  const filesIn = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return filesIn(path);
      return entry.isFile() ? [relative(copy, path)] : [];
    });
  /** Files of the copy (but its build and Jest's results) that differ from this checkout's, or that it lacks. */
  const changedFiles = () =>
    filesIn(copy)
      .filter((file) => !file.startsWith('dist/') && file !== 'jest-results.json')
      .filter((file) => !existsSync(file) || !readFileSync(file).equals(readFileSync(join(copy, file))))
      .sort();
  const inFolders = (folders: string[], changed: string[]) =>
    changed
      .filter((file) => folders.some((folder) => file.startsWith(`src/${folder}/`)))
      .map((file) => file.replace(/\/\d{13}-/, '/<13-digit timestamp>-'));
  const outsideFolders = (folders: string[], changed: string[]) =>
    changed.filter((file) => !folders.some((folder) => file.startsWith(`src/${folder}/`)));

  it('refuses a name that is not kebab-case, one in use, or a parent without a lookup, with exit 2 and the reason', () => {
    const refusals = [
      [['Comets'], 'is not a name'],
      [['comets_2'], 'is not a name'],
      [['users'], 'the folder src/users exists'],
      [['planets'], 'the API already has routes under /planets'],
      [['docs'], "/docs serves the API's documentation"],
      [['notes', '--parent', 'users'], 'only these do: planets (PlanetsLookup, src/celestial-bodies/index.ts)'],
      [['notes', '--parent'], '--parent needs the name of the parent'],
      [['image', '--parent', 'planets'], 'the API already has routes under /planets/{planetId}/image'],
      [['notes', '--verbose'], 'unknown option --verbose'],
      [['visits', '--refers-to', 'users'], 'only these do: planets (PlanetsLookup, src/celestial-bodies/index.ts)'],
      [['visits', '--parent', 'planets', '--refers-to', 'planets'], '--parent and --refers-to are two shapes'],
    ] as const;
    for (const [args, reason] of refusals) {
      expect({ args, ...run(process.execPath, 'scripts/new-module.mjs', ...args) }).toMatchObject({
        args,
        status: 2,
        output: expect.stringContaining(reason),
      });
    }
    expect(changedFiles()).toEqual([]);
  });

  it('writes a module of each shape (top-level, nested under planets, referring to a planet), changing outside its folder the files docs/development.md lists', () => {
    for (const [index, { name, singular, options }] of SHAPES.entries()) {
      // One build and export, by the last: the others leave openapi.json as it is.
      const last = index === SHAPES.length - 1;
      succeedWith(last ? {} : { NEW_MODULE_EXPORT: 'later' }, 'npm', 'run', 'new:module', '--', name, ...options);
      const changed = changedFiles();
      const done = SHAPES.slice(0, index + 1).map((shape) => shape.name);
      expect({ name, outside: outsideFolders(done, changed) }).toEqual({
        name,
        outside: [...new Set(done.flatMap((feature) => OUTSIDE_THE_FOLDER(feature)))]
          .filter((file) => last || file !== 'openapi.json')
          .sort(),
      });
      expect(inFolders([name], changed)).toEqual(IN_THE_FOLDER(name, singular));
    }
  }, 300_000);

  it('writes modules that type-check, lint and keep the dependency rules', async () => {
    const changed = changedFiles();
    const sources = changed.filter((file) => file.endsWith('.ts'));
    const formatted = changed.filter((file) => !file.endsWith('.json'));
    // Side by side, and beside the Jest run of the next test (none of them reads what it
    // writes): each is one process on one core, and the Jest run starts with one.
    suites = runSuites();
    await Promise.all([
      succeedAlongside('npm', 'run', 'typecheck'),
      succeedAlongside(process.execPath, 'node_modules/eslint/bin/eslint.js', '--max-warnings', '0', ...sources),
      succeedAlongside(process.execPath, 'node_modules/prettier/bin/prettier.cjs', '--check', ...formatted).then(() =>
        succeedAlongside('npm', 'run', 'lint:deps'),
      ),
    ]);
  }, 300_000);

  it(
    'passes their tests and every suite that checks features: problem examples, route policies, hostile input, locations, the generated client, the OpenAPI document, the soak',
    async () => {
      const { status, output } = await (suites ??= runSuites());
      const results = existsSync(join(copy, 'jest-results.json'))
        ? (JSON.parse(readFileSync(join(copy, 'jest-results.json'), 'utf8')) as {
            testResults: { name: string; status: string }[];
          })
        : { testResults: [] };
      const outcome = Object.fromEntries(
        results.testResults.map((suite) => [relative(copy, suite.name), suite.status] as const),
      );
      // Each suite ran, and passed; else the end of Jest's output says why.
      expect({ outcome, output: status === 0 ? '' : output.slice(-8000) }).toEqual({
        outcome: Object.fromEntries(SUITES.map((suite) => [suite, 'passed'])),
        output: '',
      });
    },
    15 * 60_000,
  );
});
