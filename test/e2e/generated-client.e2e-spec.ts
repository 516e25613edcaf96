import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

import type { Exchange } from '../client/exchange';
import { OpenApiResponseValidator } from '../support/openapi-validator';
import { onlyHostRefusal } from '../support/problem-examples';
import { compileStrict, runClientProgram } from '../support/strict-compile';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';

/**
 * The tier a client of the API stands on: types generated from the committed openapi.json
 * (scripts/generate-client-types.mjs), a program written against them with openapi-fetch
 * (test/client/exercise.ts, running each feature's part in test/client/features/) that
 * compiles under --strict, runs against the server, and gets only answers the document
 * promises, for every operation in it.
 */
const CLIENT_DIR = resolve('test/client');
const TYPES = join(CLIENT_DIR, 'generated/api.d.ts');
const PROGRAM = join(CLIENT_DIR, 'generated/exercise.js');
const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

interface Operation {
  operationId?: string;
  tags?: string[];
  parameters?: { in: string }[];
  responses: Record<string, unknown>;
  security?: Record<string, string[]>[];
}
interface Document {
  security?: Record<string, string[]>[];
  paths: Record<string, Record<string, Operation>>;
}

const document = JSON.parse(readFileSync('openapi.json', 'utf8')) as Document;
let t: TestApp;
let region: RegionFixture;
let baseUrl: string;
let exchanges: Exchange[] = [];

beforeAll(async () => {
  t = await startTestApp();
  region = await newRegion(t, 'Generated client');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
});
afterAll(async () => t?.close());

describe('a client generated from openapi.json', () => {
  it('is generated from the document the server serves', async () => {
    const served = await t.request({ method: 'GET', url: '/docs-json' });
    expect(served.json()).toEqual(document);
    rmSync(join(CLIENT_DIR, 'generated'), { recursive: true, force: true });
    execFileSync(process.execPath, ['scripts/generate-client-types.mjs', 'openapi.json', TYPES], { stdio: 'pipe' });
    expect(readFileSync(TYPES, 'utf8')).toContain('export interface paths');
  });

  it('type-checks a program that uses it under --strict and exactOptionalPropertyTypes', () => {
    expect(compileStrict(join(CLIENT_DIR, 'tsconfig.json'))).toEqual([]);
  });

  it('runs that program against the server: every call answered as it expects', async () => {
    const run = await runClientProgram(PROGRAM, {
      API_BASE_URL: baseUrl,
      REGION_API_KEY: region.key,
      FIXTURES_DIR: resolve('test/fixtures'),
    });
    exchanges = run.exchanges;
    // The program stops at the first answer it did not expect, and says which.
    expect(run.failure).toBe('');
  });

  it('got only responses the document declares, each body matching the schema of its status and content type', () => {
    expect(exchanges.length).toBeGreaterThan(0);
    const validator = new OpenApiResponseValidator(JSON.parse(readFileSync('openapi.json', 'utf8')));
    const departures: string[] = [];
    for (const exchange of exchanges) {
      expect(Object.keys(document.paths)).toContain(exchange.schemaPath);
      const url = new URL(exchange.url);
      try {
        validator.check(exchange.method, url.pathname, {
          statusCode: exchange.status,
          headers: exchange.headers,
          body: exchange.body,
        });
      } catch (err) {
        departures.push((err as Error).message);
      }
    }
    expect(departures).toEqual([]);
  });

  it('called every operation in the document: a success, an error where one is declared, 401 without credentials, 404 for an unknown id', () => {
    const gaps: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (!METHODS.includes(method)) continue;
        const name = `${method.toUpperCase()} ${path} (${operation.operationId ?? 'no operationId'})`;
        const calls = exchanges.filter((e) => e.method === method.toUpperCase() && e.schemaPath === path);
        const statuses = calls.map((e) => e.status);
        const declared = Object.keys(operation.responses);
        const secured = (operation.security ?? document.security ?? []).some(
          (requirement) => Object.keys(requirement).length > 0,
        );
        const hasPathParameter = (operation.parameters ?? []).some((p) => p.in === 'path');
        const wanted: [boolean, string, (status: number) => boolean][] = [
          [true, 'a success', (s) => s >= 200 && s < 300],
          [
            declared.some((s) => s.startsWith('4') && !onlyHostRefusal(operation.responses[s])),
            'an error',
            (s) => s >= 400 && s < 500,
          ],
          [secured && declared.includes('401'), 'a 401 without credentials', (s) => s === 401],
          [hasPathParameter && declared.includes('404'), 'a 404 for an unknown id', (s) => s === 404],
        ];
        const missing = wanted
          .filter(([applies, , matches]) => applies && !statuses.some(matches))
          .map(([, what]) => what);
        if (missing.length === 0) continue;
        const callers = [...new Set(calls.map((e) => e.feature))];
        gaps.push(
          callers.length > 0
            ? `${name}: missing ${missing.join(', ')} (statuses seen: ${statuses.join(', ')}): add the calls to ` +
                `exercise() in ${callers.map((feature) => `test/client/features/${feature}.ts`).join(' or ')}, which calls it`
            : `${name}: never called: in test/client/features/<feature>.ts, the file of the feature that serves it ` +
                `(${featureFileFor(operation)}; create the file if there is none), call it from ` +
                '`export async function exercise(ctx: ClientContext): Promise<void>` ' +
                `(${missing.join(', ')}; see test/client/support.ts)`,
        );
      }
    }
    expect(gaps).toEqual([]);
  });
});

/**
 * The file of the feature that calls other operations of `operation`'s tag, else one named
 * after the tag: where a call of it most likely belongs.
 */
function featureFileFor(operation: Operation): string {
  const tag = operation.tags?.[0];
  const siblings = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, other]) => other.tags?.[0] === tag)
      .map(([method]) => [method.toUpperCase(), path]),
  );
  const caller = exchanges.find((e) => siblings.some(([method, path]) => e.method === method && e.schemaPath === path));
  const feature = caller?.feature ?? (tag ? tag.toLowerCase().replace(/[^a-z0-9]+/g, '-') : '<feature>');
  return `by its tag, test/client/features/${feature}.ts`;
}
