import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';

import { usesPostgresServer } from '../support/test-database';

/**
 * `npm run new:module` writes a module that passes every check. It runs on a copy of the
 * repository (the files git tracks or would, as they are in the working tree; node_modules
 * linked), and then, in the copy: the type check, ESLint and Prettier on what it wrote, the
 * dependency rules, the new module's tests, the route table, and the service suite (the
 * committed openapi.json is the served one; every migration applied, the schema the entities
 * describe). Every response those tests get is checked against the copy's openapi.json.
 */
// Skipped on the suite's second pass, on the PostgreSQL server (DATABASE_URL): the scaffold does
// not depend on the database, and the first pass, on the embedded one, has run it.
const onFirstPass = usesPostgresServer() ? describe.skip : describe;

/** What the scaffold writes outside src/comets/ (docs/development.md, "Adding a module", lists these). */
const OUTSIDE_THE_FOLDER = [
  'bench/soak.mjs',
  'openapi.json',
  'src/app.module.ts',
  'test/e2e/comets.e2e-spec.ts',
  'test/e2e/hostile-input.e2e-spec.ts',
  'test/e2e/route-policies.e2e-spec.ts',
  'test/unit/comets.service.spec.ts',
];

const IN_THE_FOLDER = [
  'src/comets/comets.controller.ts',
  'src/comets/comets.module.ts',
  'src/comets/comets.repository.ts',
  'src/comets/comets.service.ts',
  'src/comets/dto/comet-input.dto.ts',
  'src/comets/dto/comet-page.dto.ts',
  'src/comets/dto/comet.dto.ts',
  'src/comets/entities/comet.entity.ts',
  'src/comets/index.ts',
  'src/comets/migrations/<13-digit timestamp>-comets.ts',
];

onFirstPass('npm run new:module', () => {
  let copy: string;

  beforeAll(() => {
    copy = mkdtempSync(join(tmpdir(), 'new-module-'));
    const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      encoding: 'utf8',
    });
    for (const file of files.split('\0').filter((f) => f && existsSync(f))) cpSync(file, join(copy, file));
    symlinkSync(resolve('node_modules'), join(copy, 'node_modules'), 'dir');
  });
  afterAll(() => rmSync(copy, { recursive: true, force: true }));

  const env = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => name !== 'DATABASE_URL' && name !== 'JEST_WORKER_ID'),
  );
  /** Runs a command in the copy. */
  const run = (command: string, ...args: string[]) => {
    const result = spawnSync(command, args, { cwd: copy, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    return { status: result.status, output: `${result.stdout}${result.stderr}${result.error ?? ''}` };
  };
  /** Runs a command in the copy, which must exit 0; if not, the error shows the end of its output. */
  const succeed = (command: string, ...args: string[]) => {
    const { status, output } = run(command, ...args);
    if (status !== 0) throw new Error(`${[command, ...args].join(' ')} exited with ${status}:\n${output.slice(-8000)}`);
  };

  /** The files below `dir`, not following links (node_modules is one). */
  const filesIn = (dir: string): string[] =>
    readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return filesIn(path);
      return entry.isFile() ? [relative(copy, path)] : [];
    });
  /** Files of the copy (but its build) that differ from this checkout's, or that it lacks. */
  const changedFiles = () =>
    filesIn(copy)
      .filter((file) => !file.startsWith('dist/'))
      .filter((file) => !existsSync(file) || !readFileSync(file).equals(readFileSync(join(copy, file))))
      .sort();

  it('refuses a name that is not kebab-case, or one in use, with exit 2 and the reason', () => {
    const refusals = [
      ['Comets', 'is not a name'],
      ['comets_2', 'is not a name'],
      ['users', 'the folder src/users exists'],
      ['planets', 'the API already has routes under /planets'],
      ['docs', "/docs serves the API's documentation"],
    ];
    for (const [name, reason] of refusals) {
      expect(run(process.execPath, 'scripts/new-module.mjs', name)).toMatchObject({
        status: 2,
        output: expect.stringContaining(reason),
      });
    }
    expect(changedFiles()).toEqual([]);
  });

  it(
    'writes a module that type-checks, lints, keeps the dependency rules and passes its tests and the route table',
    () => {
      succeed('npm', 'run', 'new:module', '--', 'comets');
      const changed = changedFiles();
      expect(changed.filter((file) => !file.startsWith('src/comets/'))).toEqual(OUTSIDE_THE_FOLDER);
      const folder = changed.filter((file) => file.startsWith('src/comets/'));
      expect(folder.map((file) => file.replace(/\/\d{13}-/, '/<13-digit timestamp>-'))).toEqual(IN_THE_FOLDER);

      succeed('npm', 'run', 'typecheck');
      const sources = changed.filter((file) => file.endsWith('.ts'));
      succeed(process.execPath, 'node_modules/eslint/bin/eslint.js', '--max-warnings', '0', ...sources);
      const formatted = changed.filter((file) => !file.endsWith('.json'));
      succeed(process.execPath, 'node_modules/prettier/bin/prettier.cjs', '--check', ...formatted);
      succeed('npm', 'run', 'lint:deps');
      succeed(
        'npm',
        'run',
        'jest',
        '--',
        'test/unit/comets.service.spec.ts',
        'test/e2e/comets.e2e-spec.ts',
        'test/e2e/route-policies.e2e-spec.ts',
        'test/e2e/service.e2e-spec.ts',
      );
    },
    15 * 60_000,
  );
});
