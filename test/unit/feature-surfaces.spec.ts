import { readdirSync } from 'node:fs';
import { join } from 'node:path';

import { INJECTABLE_WATERMARK } from '@nestjs/common/constants';

import { ConfigModule } from '../../src/config/config.module';
import { FEATURE_SETTINGS } from '../../src/feature-settings';

/**
 * A feature's front door (its index.ts) and its module's Nest `exports` tell the same story:
 * what the module exports to other modules is offered by index.ts, and an injectable that
 * index.ts offers is exported by the module, so it works in any module that imports it. A
 * feature module is one static module: no forServer()/forRoot() variant, which imported
 * beside the plain one would make a second instance with a second set of routes.
 *
 * The features are read from src/: every folder with an index.ts and a <name>.module.ts, but
 * the shared areas below them (as in .dependency-cruiser.cjs).
 */

const SRC = join(__dirname, '..', '..', 'src');
const SHARED = ['common', 'config', 'database'];

type Class = abstract new (...args: never[]) => unknown;

interface Feature {
  name: string;
  moduleFile: string;
  index: Record<string, unknown>;
  module: Class;
}

/** A provider or export entry as Nest takes it: a class, a token, `{ provide }`, or a (dynamic) module. */
type Entry = Class | string | symbol | { provide?: unknown; module?: Class; providers?: Entry[] };

function discoverFeatures(): Feature[] {
  return readdirSync(SRC, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && !SHARED.includes(entry.name))
    .flatMap((dir) => {
      const files = readdirSync(join(SRC, dir.name));
      const moduleFile = files.includes(`${dir.name}.module.ts`)
        ? `${dir.name}.module.ts`
        : files.find((file) => file.endsWith('.module.ts'));
      if (!files.includes('index.ts') || !moduleFile) return [];
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the list is read from the disk
      const moduleExports = require(join(SRC, dir.name, moduleFile)) as Record<string, unknown>;
      const modules = Object.values(moduleExports).filter(
        (value): value is Class => typeof value === 'function' && value.name.endsWith('Module'),
      );
      if (modules.length !== 1) throw new Error(`src/${dir.name}/${moduleFile} should export one module class`);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const index = require(join(SRC, dir.name, 'index.ts')) as Record<string, unknown>;
      return [{ name: dir.name, moduleFile: `src/${dir.name}/${moduleFile}`, index, module: modules[0] }];
    });
}

const metadataOf = (module: Class, key: 'imports' | 'providers' | 'exports'): Entry[] =>
  (Reflect.getMetadata(key, module) as Entry[] | undefined) ?? [];

const tokenOf = (entry: Entry): unknown => (typeof entry === 'object' && 'provide' in entry ? entry.provide : entry);

const nameOf = (token: unknown): string =>
  typeof token === 'function' ? token.name : typeof token === 'symbol' ? token.toString() : JSON.stringify(token);

const isModule = (entry: Entry): boolean =>
  (typeof entry === 'object' && 'module' in entry) ||
  (typeof entry === 'function' && entry.name.endsWith('Module') && Reflect.getMetadataKeys(entry).length > 0);

/** The settings classes the module reads with ConfigModule.forFeature(...) among its imports. */
const settingsOf = (module: Class): unknown[] =>
  metadataOf(module, 'imports')
    .filter((entry) => typeof entry === 'object' && 'module' in entry && entry.module === ConfigModule)
    .flatMap((entry) => (typeof entry === 'object' && 'providers' in entry ? (entry.providers ?? []) : []))
    .map(tokenOf);

const FEATURES = discoverFeatures();

it('finds the features in src/', () => {
  expect(FEATURES.map((feature) => feature.name)).toEqual(
    expect.arrayContaining(['auth', 'celestial-bodies', 'health', 'region-keys', 'sandbox', 'users']),
  );
});

describe.each(FEATURES.map((feature) => [feature.name, feature] as const))('the %s feature', (name, feature) => {
  const indexFile = `src/${name}/index.ts`;
  const offered = new Set(Object.values(feature.index));
  const exported = metadataOf(feature.module, 'exports');
  const exportedTokens = new Set(exported.map(tokenOf));
  const providedTokens = new Set(metadataOf(feature.module, 'providers').map(tokenOf));

  it(`offers its module in index.ts`, () => {
    expect(offered.has(feature.module) ? [] : [`${name}: ${indexFile} should export ${feature.module.name}`]).toEqual(
      [],
    );
  });

  it('offers in index.ts every provider its module exports', () => {
    const problems = exported
      .filter((entry) => !isModule(entry) && !offered.has(tokenOf(entry)))
      .map(
        (entry) =>
          `${name}: ${feature.module.name} exports ${nameOf(tokenOf(entry))}, which ${indexFile} does not offer: ` +
          `export it from ${indexFile}, or drop it from the exports in ${feature.moduleFile}`,
      );
    expect(problems).toEqual([]);
  });

  it('exports from its module every injectable that index.ts offers', () => {
    const problems = [...offered]
      .filter(
        (value): value is Class =>
          typeof value === 'function' &&
          value !== feature.module &&
          (Reflect.getMetadata(INJECTABLE_WATERMARK, value) === true || providedTokens.has(value)),
      )
      .filter((Class) => !exportedTokens.has(Class))
      .map(
        (Class) =>
          `${name}: ${indexFile} offers ${Class.name}, which ${feature.module.name} does not export: ` +
          `add it to the exports in ${feature.moduleFile}, or stop offering it in ${indexFile}`,
      );
    expect(problems).toEqual([]);
  });

  // Settings classes are not exported: a module that needs them imports
  // ConfigModule.forFeature(TheSettings) itself. They must be validated at boot.
  it('lists in src/feature-settings.ts the settings classes that index.ts offers', () => {
    const problems = settingsOf(feature.module)
      .filter((Class) => offered.has(Class) && !FEATURE_SETTINGS.includes(Class as never))
      .map(
        (Class) =>
          `${name}: ${indexFile} offers the settings ${nameOf(Class)}, which src/feature-settings.ts does not list: add it there`,
      );
    expect(problems).toEqual([]);
  });

  it('is one static module, the same wherever it is imported (no forRoot/forServer variant)', () => {
    const statics = Object.getOwnPropertyNames(feature.module).filter(
      (key) => typeof (feature.module as unknown as Record<string, unknown>)[key] === 'function',
    );
    expect(
      statics.map(
        (key) =>
          `${name}: ${feature.module.name}.${key}() in ${feature.moduleFile}: a feature module takes no variants; ` +
          'put what the variant adds in the module itself (start-up work that only the server does can check for the HTTP adapter)',
      ),
    ).toEqual([]);
  });
});
