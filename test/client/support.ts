import createClient, { type Client } from 'openapi-fetch';

import { recorder } from './exchange';
import type { paths } from './generated/api';

/**
 * What the client program's parts share: the context each feature's `exercise` gets
 * (test/client/features/<feature>.ts), the record of every exchange, and the checks of an answer.
 *
 * Each file of test/client/features/ is one feature of the API as a client uses it, and exports
 *
 *     export const after = ['users'];                        // optional: features to run first
 *     export async function exercise(ctx: ClientContext): Promise<void> { … }
 *
 * exercise.ts reads the folder at run time and runs every feature once, each after those its
 * `after` names (and otherwise by file name), stopping at the first answer it did not expect.
 * Between them, every operation of openapi.json must be called: a success, an error where the
 * document declares one, a 401 without credentials where it declares one, and a 404 for an
 * unknown id where the path takes one (test/e2e/generated-client.e2e-spec.ts checks it).
 */

export type Api = Client<paths>;

/** A signed-up user and a client that sends their credentials. */
export interface Person {
  id: number;
  email: string;
  password: string;
  api: Api;
}

/**
 * What a feature hands on to the features that run after it (and list it in `after`), by the
 * feature that shares it. A feature that needs another of its own adds its key here.
 */
export interface Shared {
  /** By users: Ada (signed in with a Bearer token) and Bob (with Basic). */
  people: { ada: Person; bob: Person };
}

/** What each feature's `exercise` gets. */
export interface ClientContext {
  /** A client without credentials. */
  anyone: Api;
  /** A client that sends `headers` on every request (every exchange is recorded). */
  client: (headers?: Record<string, string>) => Api;
  /** A key of a region of its own holding both permissions, at first the region's only key. */
  regionApiKey: string;
  /** test/fixtures: images and other files to upload. */
  fixturesDir: string;
  /** Hands `value` on to the features that run after this one. */
  share: <K extends keyof Shared>(key: K, value: Shared[K]) => void;
  /** What an earlier feature shared; throws when none has (list that feature in `after`). */
  shared: <K extends keyof Shared>(key: K) => Shared[K];
}

/** The shape of a file of test/client/features/, as exercise.ts loads it. */
export interface ClientFeature {
  /** The features (file names without .ts) that must run first: those whose shared state this one reads. */
  after?: readonly string[];
  exercise(ctx: ClientContext): Promise<void>;
}

/** A planet id no test creates (ids are small integers, in range of the document's maximum). */
export const UNKNOWN_PLANET_ID = 2_000_000_000;

export const basic = (email: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${email}:${password}`).toString('base64')}`,
});

/** A client of the API at `baseUrl` that sends `headers` on every request, its exchanges recorded. */
export function recordedClient(baseUrl: string, headers: Record<string, string> = {}): Api {
  const api = createClient<paths>({ baseUrl, headers });
  api.use(recorder);
  return api;
}

/** What openapi-fetch resolves to: the parsed body of a success, or of an error. */
type Result<Data, Problem> =
  { data: Data; error?: never; response: Response } | { data?: never; error: Problem; response: Response };
type Call<Data, Problem> = Result<Data, Problem> | Promise<Result<Data, Problem>>;

/** The body of a success with exactly this status. */
export async function expectData<Data, Problem>(
  call: Call<Data, Problem>,
  status: number,
  what: string,
): Promise<Data> {
  const { data, error, response } = await call;
  if (response.status !== status) throw unexpected(what, status, response, error);
  if (data === undefined) throw new Error(`${what}: ${status} without a body`);
  return data;
}

/** A success with this status and no body (204). */
export async function expectNoContent<Data, Problem>(
  call: Call<Data, Problem>,
  status: number,
  what: string,
): Promise<Response> {
  const { data, error, response } = await call;
  if (response.status !== status) throw unexpected(what, status, response, error);
  if (data !== undefined) throw new Error(`${what}: ${status} with a body: ${JSON.stringify(data)}`);
  return response;
}

/** Any answer with this status, for those neither a success body nor a problem (304). */
export async function expectStatus<Data, Problem>(
  call: Call<Data, Problem>,
  status: number,
  what: string,
): Promise<Response> {
  const { error, response } = await call;
  if (response.status !== status) throw unexpected(what, status, response, error);
  return response;
}

/**
 * The problem document of an error with this status whose `type` ends in `/<slug>`. The
 * document's error responses must be problems for this to type-check.
 */
export async function expectProblem<Data, Problem extends { type: string; status: number }>(
  call: Call<Data, Problem>,
  status: number,
  slug: string,
  what: string,
): Promise<Problem> {
  const { data, error, response } = await call;
  if (response.status !== status || error === undefined) throw unexpected(what, status, response, error ?? data);
  if (error.status !== status) throw new Error(`${what}: a ${status} whose problem says status ${error.status}`);
  if (!error.type.endsWith(`/${slug}`))
    throw new Error(`${what}: expected a problem of type …/${slug}, got ${error.type}`);
  return error;
}

export function check(condition: boolean, what: string): void {
  if (!condition) throw new Error(`${what}: not so`);
}

function unexpected(what: string, status: number, response: Response, body: unknown): Error {
  return new Error(`${what}: expected ${status}, got ${response.status} ${JSON.stringify(body)}`);
}
