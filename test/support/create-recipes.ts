import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

import type { InjectOptions } from 'light-my-request';

import type { TestApp } from './test-app';
import type { UserFixture } from './users';

/**
 * How to call each create of the API, for test/e2e/locations.e2e-spec.ts. The operations under
 * test come from openapi.json (every one that answers 201 with a Location header); what to send
 * to each is code, one file per feature in test/support/creates/ (`<feature>.ts`, the name of
 * its folder under src/), found by reading that folder: a feature adds its file and edits no
 * list. Each file exports
 *
 *     export const creates: CreateRecipes = { <operationId>: async (ctx, extra) => { … }, … };
 *
 * A recipe sends the create once, with `extra` merged into the request (the suite adds Host,
 * X-Forwarded-* and the client address), and answers the status, the Location header and the
 * path that Location must end in. An operation that creates different things gets named cases,
 * `{ 'a planet': send, 'a satellite': send }`, each tried. The suite fails while an operation
 * has no recipe, and while a recipe names an operation that is no such create.
 */

/** What a recipe has to hand: the app, a signed-up user, and a key of a region holding every permission. */
export interface CreateContext {
  t: TestApp;
  user: UserFixture;
  regionKey: string;
}

/** What the suite adds to a create: headers (Host, X-Forwarded-*) and the client's address. */
export type RequestExtra = Partial<InjectOptions> & { headers?: Record<string, string> };

export interface CreateAnswer {
  status: number;
  location: unknown;
  /** The path of what was created, which the Location must end in (`/planets/7`). */
  path: string;
  /**
   * The credentials a GET of the Location needs, if any: the region key that made a key, the
   * new user's own for sign-up's /me. Every Location answers GET with them.
   */
  readHeaders?: Record<string, string>;
}

export type SendCreate = (ctx: CreateContext, extra: RequestExtra) => Promise<CreateAnswer>;

/** By operationId: the recipe of each create of a feature, or named cases of one. */
export type CreateRecipes = Record<string, SendCreate | Record<string, SendCreate>>;

/** POSTs `payload` as JSON with `headers`, and `extra` on top (its headers winning). */
export const post = (
  ctx: CreateContext,
  url: string,
  payload: object,
  headers: Record<string, string>,
  extra: RequestExtra,
) => ctx.t.request({ method: 'POST', url, payload, ...extra, headers: { ...headers, ...extra.headers } });

export const RECIPES_DIR = join(__dirname, 'creates');

/** An operation of the document that answers 201 with a Location. */
export interface DocumentedCreate {
  method: string;
  path: string;
  operationId: string;
  tags: string[];
}

interface Operation {
  operationId?: string;
  tags?: string[];
  responses?: Record<string, { headers?: Record<string, unknown> }>;
}

/** Every operation of `document` whose 201 response declares a Location header, in the document's order. */
export function documentedCreates(document: { paths: Record<string, Record<string, Operation>> }): DocumentedCreate[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([, operation]) => operation.responses?.['201']?.headers?.Location !== undefined)
      .map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId ?? `(no operationId: ${method.toUpperCase()} ${path})`,
        tags: operation.tags ?? [],
      })),
  );
}

/** One create to try: an operation's recipe, or one of its named cases. */
export interface CreateCase {
  /** `POST /planets (createPlanet)`, with the case's name when it has one. */
  name: string;
  create: DocumentedCreate;
  send: SendCreate;
}

export interface LoadedRecipes {
  cases: CreateCase[];
  /** One message per create without a recipe, and per recipe of no create. */
  problems: string[];
}

const kebab = (text: string) => text.toLowerCase().replace(/[^a-z0-9]+/g, '-');

/** Reads test/support/creates/ and matches its recipes with the creates of `document` (the committed openapi.json by default). */
export function loadCreateRecipes(document = JSON.parse(readFileSync('openapi.json', 'utf8'))): LoadedRecipes {
  const creates = documentedCreates(document);
  const files = readdirSync(RECIPES_DIR)
    .filter((file) => file.endsWith('.ts'))
    .sort();
  const recipeOf = new Map<string, { file: string; recipe: SendCreate | Record<string, SendCreate> }>();
  const problems: string[] = [];
  for (const name of files) {
    const file = relative(process.cwd(), join(RECIPES_DIR, name));
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the recipes are the files of the folder
    const exported = (require(join(RECIPES_DIR, name)) as { creates?: CreateRecipes }).creates;
    if (!exported) {
      problems.push(`${file} exports no \`creates\`: export const creates: CreateRecipes = { <operationId>: … }`);
      continue;
    }
    for (const [operationId, recipe] of Object.entries(exported)) {
      if (!creates.some((create) => create.operationId === operationId)) {
        problems.push(
          `${file} has a recipe for ${operationId}, which openapi.json does not have as an operation answering 201 with a Location: remove it, or rename it after the operationId`,
        );
      }
      recipeOf.set(operationId, { file, recipe });
    }
  }
  const cases: CreateCase[] = [];
  for (const create of creates) {
    const operation = `${create.method} ${create.path} (${create.operationId})`;
    const found = recipeOf.get(create.operationId);
    if (!found) {
      // The file of the feature that has a recipe for another operation of the same tag, else one named after the tag.
      const sibling = creates
        .filter((other) => other.tags[0] === create.tags[0])
        .map((other) => recipeOf.get(other.operationId))
        .find((recipe) => recipe !== undefined);
      const file = sibling?.file ?? `test/support/creates/${create.tags[0] ? kebab(create.tags[0]) : '<feature>'}.ts`;
      problems.push(
        `${operation} answers 201 with a Location and has no recipe: in test/support/creates/<feature>.ts, the file of ` +
          `the feature that serves it (by its tag, ${file}; create the file if there is none), add ` +
          `${create.operationId} to \`export const creates: CreateRecipes = { ${create.operationId}: async (ctx, extra) => … }\`` +
          ` (see test/support/create-recipes.ts)`,
      );
      continue;
    }
    const { recipe } = found;
    if (typeof recipe === 'function') cases.push({ name: operation, create, send: recipe });
    else for (const [what, send] of Object.entries(recipe)) cases.push({ name: `${operation}: ${what}`, create, send });
  }
  return { cases, problems };
}
