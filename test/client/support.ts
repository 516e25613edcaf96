import type { Middleware } from 'openapi-fetch';

/** One request the client made and the response it got, as the test checks it against the document. */
export interface Exchange {
  method: string;
  /** The path template the call named, e.g. /planets/{planetId}. */
  schemaPath: string;
  url: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const exchanges: Exchange[] = [];

/** Keeps a copy of every response, before openapi-fetch parses it. */
export const recorder: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    exchanges.push({
      method: request.method,
      schemaPath,
      url: request.url,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.clone().text(),
    });
  },
};

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
