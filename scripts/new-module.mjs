// A new feature module, complete and working, in the pattern of the others:
//
//   npm run new:module -- <name> [<singular>]                      e.g. npm run new:module -- comets
//   npm run new:module -- <name> [<singular>] --parent <parent>    e.g. npm run new:module -- observations --parent planets
//   npm run new:module -- <name> [<singular>] --refers-to <other>  e.g. npm run new:module -- missions --refers-to planets
//
// <name> is the folder, the route and the table (kebab-case, plural); <singular> names one item
// (by default <name> without its plural ending: comets → comet, galaxies → galaxy).
//
// Every shape serves GET, PUT and DELETE /<name>/{id}: GET with an ETag (304 to If-None-Match),
// PUT and DELETE by its creator only (403 for anyone else), under If-Match (412). Top-level, its
// list and create are GET and POST /<name> (the create takes Idempotency-Key, as every create).
// With --parent, its items belong to one of the parent's: GET and POST
// /<parent>/{parentId}/<name> (the parent's 404 when it does not exist; a create holds the
// parent, so that it cannot land under one being deleted). With --refers-to, its items are
// top-level and name one of the other feature's in their body (`planetId`: its 404 when there is
// none; a create or update holds it). Either feature must offer a lookup that does so through its
// index.ts (PARENTS in new-module/nested.mjs: planets).
//
// It writes src/<name>/ (module, controller, service, repository, entity, migration, DTOs,
// index.ts), a unit and an e2e test, the feature's create recipe for the Location suite
// (test/support/creates/<name>.ts) and its part of the generated client
// (test/client/features/<name>.ts); adds the module to src/app.module.ts and its routes to the
// lists that must hold every route (route-policies, hostile-input, the soak), then formats
// what it wrote and exports openapi.json. It refuses (exit 2) a name that is not kebab-case or
// already used, and a parent that offers no lookup. test/e2e/new-module.e2e-spec.ts runs it on
// a copy of the repository, both ways, then the checks and every suite that lists routes.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

import { namesOf, singularOf } from './new-module/names.mjs';
import { nestedFiles, nestedRoutes, PARENTS } from './new-module/nested.mjs';
import { topLevelFiles, topLevelRoutes } from './new-module/top-level.mjs';

const KEBAB = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const USAGE =
  'usage: npm run new:module -- <name> [<singular>] [--parent <parent> | --refers-to <other>], e.g. npm run ' +
  'new:module -- comets, npm run new:module -- observations --parent planets, or npm run new:module -- missions ' +
  '--refers-to planets';

function refuse(message) {
  console.error(`new:module: ${message}`);
  process.exit(2);
}

const positional = [];
let parentName;
let referredName;
const args = process.argv.slice(2);
while (args.length > 0) {
  const arg = args.shift();
  if (arg === '--parent') parentName = args.shift() ?? '';
  else if (arg.startsWith('--parent=')) parentName = arg.slice('--parent='.length);
  else if (arg === '--refers-to') referredName = args.shift() ?? '';
  else if (arg.startsWith('--refers-to=')) referredName = arg.slice('--refers-to='.length);
  else if (arg.startsWith('-')) refuse(`unknown option ${arg}; ${USAGE}`);
  else positional.push(arg);
}
const [name, singularArg, unexpected] = positional;
if (!name || unexpected !== undefined) refuse(USAGE);

const parents = Object.entries(PARENTS)
  .map(([parent, { Lookup, feature }]) => `${parent} (${Lookup}, src/${feature}/index.ts)`)
  .join(', ');
if (parentName === '' || parentName?.startsWith('-')) refuse(`--parent needs the name of the parent: ${parents}`);
const parent = parentName !== undefined && Object.hasOwn(PARENTS, parentName) ? PARENTS[parentName] : undefined;
if (parentName !== undefined && !parent) {
  refuse(
    `--parent ${parentName}: a nested resource needs a parent whose feature offers, through its index.ts, a lookup ` +
      "that answers the parent's 404 and holds the parent within the new feature's unit of work (so that nothing is " +
      `created under a parent being deleted); only these do: ${parents}`,
  );
}
if (parentName !== undefined && referredName !== undefined)
  refuse(`--parent and --refers-to are two shapes: one of them; ${USAGE}`);
if (referredName === '' || referredName?.startsWith('-')) {
  refuse(`--refers-to needs the name of the feature its items refer to: ${parents}`);
}
const referred = referredName !== undefined && Object.hasOwn(PARENTS, referredName) ? PARENTS[referredName] : undefined;
if (referredName !== undefined && !referred) {
  refuse(
    `--refers-to ${referredName}: an item that refers to another feature's needs a feature whose index.ts offers a ` +
      `lookup that answers its 404 and holds it within the new feature's unit of work; only these do: ${parents}`,
  );
}
for (const [option, uses] of [
  ['--parent', parent],
  ['--refers-to', referred],
]) {
  if (!uses) continue;
  const door = readFileSync(`src/${uses.feature}/index.ts`, 'utf8');
  const missing = uses.exports.filter((exported) => !new RegExp(`\\b${exported}\\b`).test(door));
  if (missing.length > 0) refuse(`${option}: src/${uses.feature}/index.ts does not export ${missing.join(', ')}`);
}

const singularName = singularArg ?? singularOf(name);
// PostgreSQL cuts names at 63 characters; the table's longest constraint name adds this suffix.
const longestSuffix = parent ? `_${parent.column}_created_at_id_idx` : '_created_at_id_idx';
const maxLength = Math.min(40, 63 - longestSuffix.length);
for (const word of [name, singularName]) {
  if (!KEBAB.test(word) || word.length > maxLength) {
    refuse(
      `"${word}" is not a name: lower-case words of letters and digits joined by "-", at most ${maxLength} characters`,
    );
  }
}
const n = { ...namesOf(name, singularName, Date.now()), ref: referred };

const openapi = JSON.parse(readFileSync('openapi.json', 'utf8'));
const migrations = readdirSync('src', { recursive: true })
  .filter((file) => /\/migrations\/[^/]+\.ts$/.test(file))
  .map((file) => readFileSync(`src/${file}`, 'utf8'))
  .join('\n');
const listPath = parent && `${parent.path}/{${parent.param}}/${name}`;
const taken = [
  existsSync(`src/${name}`) && `the folder src/${name} exists`,
  Object.keys(openapi.paths).some((path) => path === `/${name}` || path.startsWith(`/${name}/`)) &&
    `the API already has routes under /${name}`,
  parent &&
    Object.keys(openapi.paths).some((path) => path === listPath || path.startsWith(`${listPath}/`)) &&
    `the API already has routes under ${listPath}`,
  // Served beside the document, not in it (src/common/swagger/openapi.ts).
  ['docs', 'docs-json', 'docs-yaml'].includes(name) && `/${name} serves the API's documentation`,
  migrations.includes(`CREATE TABLE "${n.table}"`) && `a migration already creates the table ${n.table}`,
  [n.Singular, `${n.Singular}Input`, `Paginated${n.Plural}`]
    .filter((schema) => schema in openapi.components.schemas)
    .map((schema) => `the OpenAPI document already has a schema ${schema}`)[0],
  n.Singular in globalThis && `the entity ${n.Singular} would hide JavaScript's own ${n.Singular}`,
  parent && singularName === parent.one && `one ${singularName} would have the name of its parent`,
  referred && singularName === referred.one && `one ${singularName} would have the name of what it refers to`,
].find(Boolean);
if (taken) refuse(`cannot create the module "${name}": ${taken}`);

const files = parent ? nestedFiles(n, parent) : topLevelFiles(n);
const routes = parent ? nestedRoutes(n, parent) : topLevelRoutes(n);

// ---------------------------------------------------------------------------------------
// The lists outside the folder that name every module or route

/**
 * `text` with `entries` added at the end of the list that runs from `opening` to the first
 * `closing` after it (the first found of several, when `closing` is a list).
 */
function appendToList(file, text, [opening, closing, entries]) {
  const start = text.indexOf(opening);
  const ends = [closing]
    .flat()
    .map((end) => (start < 0 ? -1 : text.indexOf(end, start + opening.length)))
    .filter((end) => end >= 0);
  if (ends.length === 0) {
    refuse(
      `${file}: "${opening}" … "${[closing].flat().join('" or "')}" not found, so the module cannot be added there`,
    );
  }
  const end = Math.min(...ends);
  return `${text.slice(0, end)}\n${entries}${text.slice(end)}`;
}

const lists = {
  'src/app.module.ts': [
    ["from '@nestjs/common';", '\n\n@Module(', `import { ${n.Plural}Module } from './${name}';`],
    // Before the modules a test adds, if the list ends with them.
    ['imports: [', ['\n        ...modules,', '\n      ],'], `        ${n.Plural}Module,`],
  ],
  // Its group in /docs, before the problem types and health, which come last.
  'src/common/swagger/openapi.ts': [
    [
      'const TAGS:',
      "\n  {\n    name: 'Problems',",
      `  {
    name: '${n.Title}',
    description:
      '${n.Title}${parent ? ` of ${parent.many}` : ''}: anyone may read them; creating one takes a user (Basic or Bearer), and ' +
      'only its creator may change or delete it.',
  },`,
    ],
  ],
  'test/unit/openapi-newcomer.spec.ts': [
    ['expect(tags.map(({ name }) => name)).toEqual([', "\n      'Problems',", `      '${n.Title}',`],
  ],
  'test/e2e/route-policies.e2e-spec.ts': [
    ['const EXPECTED: Record<string, string> = {', '\n};', routes['test/e2e/route-policies.e2e-spec.ts']],
  ],
  'test/e2e/hostile-input.e2e-spec.ts': [
    ['const KNOWLEDGE: Record<string, RouteKnowledge> = {', '\n};', routes['test/e2e/hostile-input.e2e-spec.ts']],
  ],
  'bench/soak.mjs': [['const OPERATIONS = [', '\n];', routes['bench/soak.mjs']]],
};
/** What shows that an earlier run added `entries` already: the first route or tag they name, or themselves. */
const markerOf = (entries) => /'(GET|POST|PUT|DELETE) [^']+'|name: '[^']+'/.exec(entries)?.[0] ?? entries.trim();
// Every edit is made before anything is written. A list that names the module or its routes
// already (an earlier run that failed later) is left as it is.
const edited = Object.entries(lists).map(([file, additions]) => [
  file,
  additions.reduce(
    (text, addition) => (text.includes(markerOf(addition[2])) ? text : appendToList(file, text, addition)),
    readFileSync(file, 'utf8'),
  ),
]);
const written = [...Object.entries(files), ...edited];
for (const [file, text] of written) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
}

/** Runs a step on what is written; when it fails, the files stay, to be fixed and the step run again. */
function step(command, ...args) {
  try {
    execFileSync(command, args, { stdio: 'inherit' });
  } catch {
    console.error(`new:module: failed: ${[command, ...args].join(' ')}`);
    process.exit(1);
  }
}
const paths = written.map(([file]) => file);
// ESLint puts the imports in order (it lints no .mjs), Prettier lays everything out.
step(
  process.execPath,
  'node_modules/eslint/bin/eslint.js',
  '--config',
  'scripts/new-module/sort-imports.config.mjs',
  '--fix',
  ...paths.filter((file) => file.endsWith('.ts')),
);
step(process.execPath, 'node_modules/prettier/bin/prettier.cjs', '--write', '--log-level', 'warn', ...paths);
// openapi.json, as `npm run openapi:export` makes it, but compiled incrementally rather than
// by a clean build: the scaffold only adds sources, and the next scaffold or test run then
// recompiles only what changed. NEW_MODULE_EXPORT=later leaves both to the next scaffold that
// exports (the scaffold's test writes three features in a row and exports after the last).
const exported = process.env.NEW_MODULE_EXPORT !== 'later';
if (exported) {
  step(process.execPath, 'node_modules/@nestjs/cli/bin/nest.js', 'build');
  step(process.execPath, 'dist/src/tools/export-openapi.js', 'openapi.json');
}
console.log(
  `new:module: wrote src/${name}/, its tests, test/support/creates/${name}.ts and test/client/features/${name}.ts; ` +
    `edited ${Object.keys(lists).join(', ')}${exported ? ' and openapi.json' : '; openapi.json not exported (NEW_MODULE_EXPORT=later)'}`,
);
