import { readFileSync } from 'node:fs';

import { problemSlugOf } from './problems';

/** A problem example of the OpenAPI document, as the service sends it. */
export interface ProblemExample {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors?: { field: string; message: string }[];
}

type Document = {
  paths: Record<
    string,
    Record<
      string,
      {
        responses?: Record<
          string,
          { content?: Record<string, { examples?: Record<string, { value: ProblemExample }> }> }
        >;
      }
    >
  >;
};

const ISO = '\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?Z';
const UUID = '[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}';
const VARIABLE = new RegExp(`${ISO}|${UUID}|\\d+`, 'gi');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The example's detail as a pattern: each number, timestamp and UUID in it stands for any of its kind. */
export function detailPattern(detail: string): RegExp {
  let source = '';
  let last = 0;
  for (const match of detail.matchAll(VARIABLE)) {
    const kind = new RegExp(`^${ISO}$`).test(match[0])
      ? ISO
      : new RegExp(`^${UUID}$`, 'i').test(match[0])
        ? UUID
        : '\\d+';
    source += escape(detail.slice(last, match.index)) + kind;
    last = match.index + match[0].length;
  }
  return new RegExp(`^${source}${escape(detail.slice(last))}$`);
}

/**
 * Every problem example of `document`, by operation, status and type, as
 * `GET /planets/{planetId} 404 not-found`.
 */
export function declaredExamples(document: Document): Map<string, ProblemExample> {
  const all = new Map<string, ProblemExample>();
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        for (const { value } of Object.values(response.content?.['application/problem+json']?.examples ?? {})) {
          all.set(`${method.toUpperCase()} ${path} ${status} ${problemSlugOf(value.type)}`, value);
        }
      }
    }
  }
  return all;
}

let committed: Map<string, ProblemExample> | undefined;

/** The example of the committed openapi.json (the served one, as the service suite checks) for `key`. */
export function committedExample(key: string): ProblemExample {
  committed ??= declaredExamples(JSON.parse(readFileSync('openapi.json', 'utf8')) as Document);
  const example = committed.get(key);
  if (!example) throw new Error(`openapi.json has no problem example ${key}`);
  return example;
}

/**
 * Asserts that a problem document is the example of its operation, status and type (`key`):
 * the same type, title and status, the detail matching the example's (see detailPattern), and
 * the same `errors` fields.
 */
export function expectExampleAnswer(body: ProblemExample, key: string, example = committedExample(key)): void {
  const [, , status, slug] = key.split(' ');
  expect({ status: body.status, slug: problemSlugOf(body.type), title: body.title }).toEqual({
    status: Number(status),
    slug,
    title: example.title,
  });
  expect(body.detail).toMatch(detailPattern(example.detail));
  expect((body.errors ?? []).map((e) => e.field)).toEqual((example.errors ?? []).map((e) => e.field));
}
