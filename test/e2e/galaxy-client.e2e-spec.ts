import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { parse } from 'yaml';

import type { Exchange } from '../client/exchange';
import { OpenApiResponseValidator } from '../support/openapi-validator';
import { compileStrict, runClientProgram } from '../support/strict-compile';
import { newRegion, RegionFixture, startTestApp, TestApp } from '../support/test-app';

/**
 * The tier a client written for the Galaxy stands on: types generated from the Galaxy 0.6.12
 * document itself (test/fixtures/galaxy/, MIT, its LICENSE beside it), not from ours, and a
 * program on them (test/client/galaxy/galaxy.ts) that compiles under --strict and runs the
 * Galaxy's flows against this server, asserting the refusals by design; every success it got
 * must match the Galaxy's own schemas.
 */
const GALAXY = resolve('test/fixtures/galaxy/galaxy-0.6.12.openapi.yaml');
const CLIENT_DIR = resolve('test/client/galaxy');
const TYPES = join(CLIENT_DIR, 'generated/galaxy.d.ts');
const PROGRAM = join(CLIENT_DIR, 'generated/out/galaxy/galaxy.js');

type Json = Record<string, unknown>;

/**
 * The Galaxy's document, ready for the response checker. Its paged list is a generic
 * (PaginatedResource bound to Planet with $dynamicAnchor/$dynamicRef), which Ajv does not
 * resolve across the schema resources their `$id`s make; each binding becomes the generic
 * with its item type written in, and the `$id`s go, so that every `$ref` is into the document.
 */
function galaxyDocument(): Json {
  const document = parse(readFileSync(GALAXY, 'utf8')) as Json;
  const schemas = (document.components as { schemas: Record<string, Json> }).schemas;
  const generic = schemas.PaginatedResource;
  const bind = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(bind);
    if (typeof node !== 'object' || node === null) return node;
    const object = node as Json;
    const item = (object.$defs as { itemType?: { $ref?: string } } | undefined)?.itemType?.$ref;
    if (object.$ref === '#/components/schemas/PaginatedResource' && item) {
      const { properties } = generic as { properties: Json };
      return { type: 'object', properties: { ...properties, data: { type: 'array', items: { $ref: item } } } };
    }
    return Object.fromEntries(
      Object.entries(object)
        .filter(([key]) => key !== '$id')
        .map(([k, v]) => [k, bind(v)]),
    );
  };
  return bind(document) as Json;
}

let t: TestApp;
let region: RegionFixture;
let baseUrl: string;
let exchanges: Exchange[] = [];

beforeAll(async () => {
  t = await startTestApp();
  region = await newRegion(t, 'Galaxy client');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = (await t.app.getUrl()).replace('[::1]', '127.0.0.1');
});
afterAll(async () => t?.close());

describe('a client generated from the Galaxy 0.6.12 document', () => {
  it('is generated from that document', () => {
    rmSync(join(CLIENT_DIR, 'generated'), { recursive: true, force: true });
    execFileSync(process.execPath, ['scripts/generate-client-types.mjs', GALAXY, TYPES], { stdio: 'pipe' });
    expect(readFileSync(TYPES, 'utf8')).toContain('export interface paths');
  });

  it('type-checks a program that uses it under --strict and exactOptionalPropertyTypes', () => {
    expect(compileStrict(join(CLIENT_DIR, 'tsconfig.json'))).toEqual([]);
  });

  it("runs the Galaxy's flows against the server: every call a success, or a refusal by design", async () => {
    const run = await runClientProgram(PROGRAM, {
      API_BASE_URL: baseUrl,
      REGION_API_KEY: region.key,
    });
    exchanges = run.exchanges;
    // The program stops at the first answer it did not expect, and says which.
    expect(run.failure).toBe('');
  });

  it("got successes that match the Galaxy's schemas, for every operation of its flows", () => {
    // The Galaxy's contract declares no response headers: ETag and Retry-After are checked
    // against this service's own document, in every other suite.
    const validator = new OpenApiResponseValidator(galaxyDocument() as never, { signalHeaders: false });
    const successes = exchanges.filter((e) => e.status >= 200 && e.status < 300);
    const departures: string[] = [];
    for (const exchange of successes) {
      try {
        validator.check(exchange.method, new URL(exchange.url).pathname, {
          statusCode: exchange.status,
          headers: exchange.headers,
          body: exchange.body,
        });
      } catch (err) {
        departures.push((err as Error).message);
      }
    }
    expect(departures).toEqual([]);
    const operations = new Set(successes.map((e) => `${e.method} ${e.schemaPath}`));
    expect([...operations].sort()).toEqual([
      'DELETE /planets/{planetId}',
      'GET /me',
      'GET /planets',
      'GET /planets/{planetId}',
      'POST /auth/token',
      'POST /celestial-bodies',
      'POST /planets',
      'POST /user/signup',
      'PUT /planets/{planetId}',
    ]);
  });
});
