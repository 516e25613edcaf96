/**
 * A client of this API, written as an integrator would write one: openapi-fetch over the
 * types openapi-typescript generates from openapi.json (generated/api.d.ts). Each feature of
 * the API has its part in features/<feature>.ts (what each exports, and the context it gets:
 * support.ts); this program reads that folder, runs every part against the server, each
 * after the parts its `after` names (otherwise by file name), and writes every exchange to
 * EXCHANGES_FILE for the test to check against the document
 * (test/e2e/generated-client.e2e-spec.ts, which generates the types, compiles this folder
 * under --strict and runs it, and checks that the parts together called every operation).
 *
 * Environment: API_BASE_URL, REGION_API_KEY (a key holding both permissions, the only one
 * of its region), FIXTURES_DIR (test/fixtures), EXCHANGES_FILE.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

import { exchanges, running } from './exchange';
import { type ClientContext, type ClientFeature, recordedClient, type Shared } from './support';

const env = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
};

/** Compiled beside this file: generated/features/*.js. */
const FEATURES_DIR = join(__dirname, 'features');

interface Loaded extends ClientFeature {
  name: string;
}

/** Every file of features/, checked for the shape support.ts gives it. */
function loadFeatures(): Loaded[] {
  return readdirSync(FEATURES_DIR)
    .filter((file) => file.endsWith('.js'))
    .sort()
    .map((file) => {
      const name = basename(file, '.js');
      // eslint-disable-next-line @typescript-eslint/no-require-imports -- the parts are the files of the folder
      const loaded = require(join(FEATURES_DIR, file)) as Partial<ClientFeature>;
      if (typeof loaded.exercise !== 'function') {
        throw new Error(
          `test/client/features/${name}.ts exports no exercise: export async function exercise(ctx: ClientContext): Promise<void>`,
        );
      }
      return { name, after: loaded.after ?? [], exercise: loaded.exercise };
    });
}

/** The features in an order where each comes after those its `after` names; otherwise by name. */
function ordered(features: Loaded[]): Loaded[] {
  const names = new Set(features.map((feature) => feature.name));
  for (const { name, after = [] } of features) {
    const unknown = after.filter((other) => !names.has(other));
    if (unknown.length > 0) {
      throw new Error(`test/client/features/${name}.ts runs after ${unknown.join(', ')}: no such file in features/`);
    }
  }
  const order: Loaded[] = [];
  const pending = [...features];
  while (pending.length > 0) {
    const next = pending.findIndex(({ after = [] }) => after.every((other) => order.some((f) => f.name === other)));
    if (next < 0) throw new Error(`the features ${pending.map((f) => f.name).join(', ')} wait for each other (after)`);
    order.push(...pending.splice(next, 1));
  }
  return order;
}

async function main(): Promise<void> {
  const baseUrl = env('API_BASE_URL');
  const state: Partial<Shared> = {};
  const context: ClientContext = {
    anyone: recordedClient(baseUrl),
    client: (headers = {}) => recordedClient(baseUrl, headers),
    regionApiKey: env('REGION_API_KEY'),
    fixturesDir: env('FIXTURES_DIR'),
    share: (key, value) => {
      state[key] = value;
    },
    shared: (key) => {
      const value = state[key];
      if (value === undefined) {
        throw new Error(`${running.feature}: nothing shared as ${key} yet: list the feature that shares it in after`);
      }
      return value;
    },
  };
  try {
    for (const feature of ordered(loadFeatures())) {
      running.feature = feature.name;
      await feature.exercise(context);
    }
  } finally {
    writeFileSync(env('EXCHANGES_FILE'), JSON.stringify(exchanges));
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
