import type { Middleware } from 'openapi-fetch';

// Apart from support.ts, which needs the generated types: the test that runs the client reads
// this file's Exchange, and the project's type check knows no generated types.

/** One request the client made and the response it got, as the test checks it against the document. */
export interface Exchange {
  /** The feature whose `exercise` made it (its file in test/client/features/, without .ts). */
  feature: string;
  method: string;
  /** The path template the call named, e.g. /planets/{planetId}. */
  schemaPath: string;
  url: string;
  status: number;
  headers: Record<string, string>;
  body: string;
}

export const exchanges: Exchange[] = [];

/** The feature running now, which the recorder names in each exchange (exercise.ts sets it). */
export const running = { feature: '' };

/** Keeps a copy of every response, before openapi-fetch parses it. */
export const recorder: Middleware = {
  async onResponse({ request, response, schemaPath }) {
    exchanges.push({
      feature: running.feature,
      method: request.method,
      schemaPath,
      url: request.url,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      body: await response.clone().text(),
    });
  },
};
