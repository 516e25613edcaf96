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

/** A response of the document, as far as its problem examples go. */
type ProblemResponse = { content?: Record<string, { examples?: Record<string, { value: ProblemExample }> }> };

type Document = { paths: Record<string, Record<string, { responses?: Record<string, ProblemResponse> }>> };

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

// ---------------------------------------------------------------------------------------
// Requests made from the document: what a route's common answers need, read from its operation

interface Schema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  example?: unknown;
  examples?: unknown[];
  minimum?: number;
  minLength?: number;
  maxLength?: number;
  required?: string[];
  properties?: Record<string, Schema>;
  allOf?: Schema[];
  items?: Schema;
}
interface Parameter {
  name: string;
  in: string;
  required?: boolean;
  schema?: Schema;
}
export interface DocumentOperation {
  security?: Record<string, unknown>[];
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
export interface OpenApiDocument {
  paths: Record<string, Record<string, DocumentOperation>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Who an operation lets in: anyone, a signed-in user, or a region key. */
export function callerOf(operation: DocumentOperation): 'public' | 'user' | 'region-key' {
  const schemes = (operation.security ?? []).flatMap((requirement) => Object.keys(requirement));
  if (schemes.includes('apiKeyHeader')) return 'region-key';
  return schemes.length > 0 ? 'user' : 'public';
}

/** `schema` with its $ref and allOf resolved against `document`. */
export function resolveSchema(document: OpenApiDocument, schema: Schema | undefined): Schema {
  if (!schema) return {};
  if (schema.$ref) return resolveSchema(document, document.components?.schemas?.[schema.$ref.split('/').pop()!]);
  if (schema.allOf) return Object.assign({}, ...schema.allOf.map((part) => resolveSchema(document, part)), schema);
  return schema;
}

/** The JSON body's schema of `operation`, if it takes one. */
export const jsonBodySchema = (document: OpenApiDocument, operation: DocumentOperation): Schema | undefined => {
  const schema = operation.requestBody?.content?.['application/json']?.schema;
  return schema && resolveSchema(document, schema);
};

/**
 * A valid body for `schema`: each required property (and each with an example) at its example,
 * `reference(name)` for a property that refers to another resource by id (e.g. `planetId`).
 */
export function sampleBody(
  document: OpenApiDocument,
  schema: Schema,
  reference: (property: string) => unknown,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    const property = resolveSchema(document, raw);
    const referred = reference(name);
    if (referred !== undefined) body[name] = referred;
    else if (property.example !== undefined) body[name] = property.example;
    else if (property.examples?.length) body[name] = property.examples[0];
    else if (property.enum?.length) body[name] = property.enum[0];
    else if (property.properties && schema.required?.includes(name)) {
      body[name] = sampleBody(document, property, reference);
    }
  }
  return body;
}

/** A value `schema` refuses (a string too short or too long, an integer below its minimum or not one), if there is one. */
export function refusedValue(schema: Schema): unknown {
  const type = [schema.type].flat()[0];
  if (type === 'integer' || type === 'number') return schema.minimum !== undefined ? schema.minimum - 1 : 'x';
  if (schema.format === 'uuid') return 'not-a-uuid';
  if (type === 'string') {
    if (schema.enum) return 'not-one-of-them';
    if ((schema.minLength ?? 0) > 0) return '';
    if (schema.maxLength !== undefined) return 'x'.repeat(schema.maxLength + 1);
  }
  if (type === 'boolean') return 'x';
  return undefined;
}

/**
 * Whether a response is only the edge's 400 for a malformed Host (openapi.ts, documentEdgeRefusals),
 * sent before authentication (no RateLimit headers), and which a fetch client cannot provoke:
 * Host is a header fetch sets itself.
 */
export function onlyHostRefusal(response: unknown): boolean {
  const examples = Object.values((response as ProblemResponse).content?.['application/problem+json']?.examples ?? {});
  return examples.length > 0 && examples.every(({ value }) => value.errors?.every((e) => e.field === 'Host'));
}
