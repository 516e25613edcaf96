import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, DECORATORS, getSchemaPath, type OpenAPIObject } from '@nestjs/swagger';

import { type DomainError, type ProblemDocument, UnsupportedMediaTypeError } from '../problem/problem';
import { problemOfError } from '../problem/problem-reply';
import {
  allProblemTypes,
  MALFORMED_JSON,
  PAYLOAD_TOO_LARGE,
  type ProblemExample,
  problemExampleOf,
  type ProblemType,
  problemTypeUri,
  UNSUPPORTED_MEDIA_TYPE,
  VALIDATION,
} from '../problem/problem-types';
import { ProblemDto } from './problem.dto';

export const PROBLEM_MEDIA_TYPE = 'application/problem+json';

type HeadersObject = Record<string, { description?: string; schema?: object }>;

/** Where @nestjs/swagger keeps an operation's (or controller's) declared responses, keyed by status. */
const API_RESPONSE = DECORATORS.API_RESPONSE;

const DEFAULT_DESCRIPTIONS: Record<number, string> = {
  400: 'Invalid input: malformed JSON, unknown fields, wrong types, or a bad parameter.',
  401: 'Missing or invalid credentials.',
  403: 'Authenticated, but not allowed to do this.',
  404: 'Not found.',
  408: 'The request did not arrive in time; the connection is closed.',
  409: 'Conflicts with the current state.',
  412: 'The resource changed since the ETag sent in If-Match.',
  413: 'The request body is too large.',
  415: 'The request body is not of a type this operation reads, or is sent compressed (Content-Encoding).',
  429: 'Too many requests; see Retry-After.',
  500: 'The server failed; the cause is logged, not told.',
  503: 'Temporarily unavailable (the database is busy or unreachable); retry after the time given in Retry-After.',
};

/** Problem types one response status of an operation can carry, with what they mean there. */
export interface ProblemResponse {
  types: ProblemType[];
  description?: string;
  headers?: HeadersObject;
  /**
   * The errors this operation raises, as its code raises them (`() => new PlanetNotFoundError(42)`),
   * for the examples of their types; a type with none here shows its own (problemExampleOf).
   */
  examples?: ProblemExample[];
}

/** Every 429 and 503 says when to retry. */
export const RETRY_AFTER_HEADER = {
  'Retry-After': { description: 'Seconds to wait before trying again.', schema: { type: 'integer', minimum: 1 } },
} as const;
/** A 415 for a compressed body says which codings are taken: none (refuseEncodedBodies). */
const ACCEPT_ENCODING_HEADER = {
  'Accept-Encoding': {
    description: 'On a 415 for a body sent with a Content-Encoding: `identity`, bodies are taken uncompressed.',
    schema: { type: 'string', enum: ['identity'] },
  },
} as const;
/** The headers every response of a status carries, besides a route's own. */
const STATUS_HEADERS: Record<number, HeadersObject> = {
  415: ACCEPT_ENCODING_HEADER,
  429: RETRY_AFTER_HEADER,
  503: RETRY_AFTER_HEADER,
};

interface ResponseEntry {
  description?: string;
  headers?: HeadersObject;
  content?: Record<string, { schema?: object; examples?: Record<string, { summary?: string; value: unknown }> }>;
}
type Responses = Record<string, ResponseEntry>;

/**
 * The example of a problem type in the OpenAPI document: the document the service sends for
 * `error` (made by the same function as the real answer), else for the type's own example.
 */
export function problemExample(
  type: ProblemType,
  error: DomainError = problemExampleOf(type),
): { summary: string; value: ProblemDocument } {
  if (error.slug !== type.slug) throw new Error(`@ApiProblems: an example of ${error.slug} given for ${type.slug}`);
  return { summary: type.title, value: problemOfError(error) };
}

/**
 * Declares the problem documents an operation can answer with: per status an
 * `application/problem+json` response with the ProblemDto schema and one named example per
 * problem type, e.g. `@ApiProblems({ types: [NOT_FOUND], examples: [() => new PlanetNotFoundError(42)] }, LAST_API_KEY)`.
 * An example is the error the operation's code raises, turned into the document the service
 * sends; a type without one in `examples` shows the type's own. A bare type takes its
 * status's usual description. A 429 or 503 declares Retry-After. Declarations of one status
 * (from the route, its controller, and auth decorators) add up instead of replacing each
 * other; of two examples of one type, the route's own (declared nearest it) is kept.
 */
export function ApiProblems(...responses: (ProblemType | ProblemResponse)[]) {
  const declared: Responses = {};
  for (const response of responses) {
    const {
      types,
      description,
      headers,
      examples = [],
    } = 'types' in response
      ? response
      : { types: [response] as ProblemType[], description: undefined, headers: undefined, examples: undefined };
    const status = types[0]?.status;
    if (status === undefined || types.some((t) => t.status !== status)) {
      throw new Error(
        `@ApiProblems: a response lists problem types of one status (${types.map((t) => `${t.slug} ${t.status}`).join(', ')})`,
      );
    }
    const errors = examples.map((example) => example());
    for (const error of errors) {
      if (!types.some((t) => t.slug === error.slug))
        throw new Error(
          `@ApiProblems: an example of ${error.slug} for a response of ${types.map((t) => t.slug).join(', ')}`,
        );
    }
    const allHeaders = STATUS_HEADERS[status] ? { ...STATUS_HEADERS[status], ...headers } : headers;
    declared[status] = mergeEntry(declared[status], {
      description: description ?? DEFAULT_DESCRIPTIONS[status] ?? types.map((t) => `${t.title}.`).join(' '),
      ...(allHeaders ? { headers: allHeaders } : {}),
      content: {
        [PROBLEM_MEDIA_TYPE]: {
          schema: { $ref: getSchemaPath(ProblemDto) },
          examples: Object.fromEntries(
            types.map((t) => [
              t.slug,
              problemExample(
                t,
                errors.find((e) => e.slug === t.slug),
              ),
            ]),
          ),
        },
      },
    });
  }
  return applyDecorators(ApiExtraModels(ProblemDto), declareResponses(declared));
}

function declareResponses(declared: Responses): ClassDecorator & MethodDecorator {
  return ((target: object, _key?: string | symbol, descriptor?: PropertyDescriptor) => {
    if (descriptor) {
      addResponses(descriptor.value as object, declared);
      return descriptor;
    }
    addResponses(target, declared);
    // A controller's responses are replaced, status by status, by those its routes declare:
    // where a route declares the same status, it gets the controller's problems too.
    const prototype = (target as { prototype: Record<string, unknown> }).prototype;
    for (const name of Object.getOwnPropertyNames(prototype)) {
      const method = Object.getOwnPropertyDescriptor(prototype, name)?.value as object | undefined;
      if (typeof method !== 'function') continue;
      const own = Reflect.getMetadata(API_RESPONSE, method) as Responses | undefined;
      if (!own) continue;
      const shared = Object.fromEntries(Object.entries(declared).filter(([status]) => own[status]));
      if (Object.keys(shared).length > 0) addResponses(method, shared);
    }
    return target;
  }) as ClassDecorator & MethodDecorator;
}

function addResponses(target: object, declared: Responses): void {
  const existing = (Reflect.getMetadata(API_RESPONSE, target) as Responses | undefined) ?? {};
  const merged: Responses = { ...existing };
  for (const [status, entry] of Object.entries(declared)) merged[status] = mergeEntry(existing[status], entry);
  Reflect.defineMetadata(API_RESPONSE, merged, target);
}

function mergeEntry(existing: ResponseEntry | undefined, incoming: ResponseEntry): ResponseEntry {
  if (!existing) return incoming;
  const descriptions = [existing.description, incoming.description].filter((d): d is string => !!d);
  const content = { ...existing.content };
  for (const [media, value] of Object.entries(incoming.content ?? {})) {
    // The example declared nearest the route (applied first) is its own; a shared decorator's gives way.
    content[media] = { ...content[media], ...value, examples: { ...value.examples, ...content[media]?.examples } };
  }
  return {
    ...existing,
    ...incoming,
    description: [...new Set(descriptions)].join('\n\n'),
    ...(existing.headers || incoming.headers ? { headers: { ...existing.headers, ...incoming.headers } } : {}),
    content,
  };
}

/**
 * What a route that reads a JSON body answers besides its own rules: 400 for a body that is
 * not JSON (with `validation` for values it refuses), 413 past the body limit, 415 for
 * another media type. `invalid` says what its validation refuses, and `invalidExample` is its
 * answer to one bad input (see invalidBody, invalidQuery). `mergePatch`: the route is
 * @AcceptsMergePatch(), and its 415 names both types.
 */
export const jsonBodyProblems = (
  invalid: string,
  invalidExample: ProblemExample,
  { mergePatch = false } = {},
): ProblemResponse[] => [
  {
    types: [VALIDATION, MALFORMED_JSON],
    description: `${invalid} Or a body that is not valid JSON (\`malformed-json\`).`,
    examples: [invalidExample],
  },
  { types: [PAYLOAD_TOO_LARGE] },
  mergePatch
    ? { types: [UNSUPPORTED_MEDIA_TYPE], examples: [() => UnsupportedMediaTypeError.forMergePatch()] }
    : { types: [UNSUPPORTED_MEDIA_TYPE] },
];

/**
 * A route that takes no body still has one parsed when a client sends it: such a body can
 * be malformed JSON, too large, or of another media type. `invalidExample` is the route's
 * answer to a bad parameter (whose 400 its parameter's decorator describes), or `invalid`
 * says what its parameters may get wrong.
 */
export const unexpectedBodyProblems = (invalidExample: ProblemExample, invalid?: string): ProblemResponse[] => [
  {
    types: [VALIDATION, MALFORMED_JSON],
    description: `${invalid ? `${invalid} Or a` : 'A'} body was sent (this request takes none) that is not valid JSON.`,
    examples: [invalidExample],
  },
  {
    types: [PAYLOAD_TOO_LARGE],
    description: 'A body was sent, larger than any this API accepts (this request takes no body).',
  },
  {
    types: [UNSUPPORTED_MEDIA_TYPE],
    description:
      'A body was sent (this request takes none) that is not JSON, or is sent compressed (Content-Encoding).',
  },
];

/**
 * Problem.type lists the types this version sends, and stays open to those a later one adds:
 * `anyOf` an enum and any string, which generated clients type as the known values or a string
 * (openapi-typescript: a union with `string`), never as a closed set that a new type would break.
 */
function enumerateProblemTypes(document: OpenAPIObject, uris: string[]): void {
  const name = getSchemaPath(ProblemDto).split('/').at(-1)!;
  const problem = document.components?.schemas?.[name] as
    { properties: Record<string, Record<string, unknown>> } | undefined;
  if (!problem) return;
  const { type, ...described } = problem.properties.type;
  if (type !== 'string') throw new Error(`${name}.type is documented as ${String(type)}, not a string`);
  problem.properties = {
    ...problem.properties,
    type: {
      ...described,
      anyOf: [
        { type: 'string', enum: uris, description: 'A type this version of the service sends.' },
        { type: 'string', description: 'A type added in a later version: act on the status.' },
      ],
    },
  };
}

/**
 * Completes the document's account of errors: `x-problem-types` lists every registered
 * problem type (those no single operation declares too: a 405, a 500), and when the
 * deployment has a public base URL, the examples' type URIs are made absolute, as the
 * service sends them.
 */
export function documentProblemTypes(document: OpenAPIObject, baseUrl: string | undefined): void {
  const types = allProblemTypes().map((t) => ({
    type: problemTypeUri(t.slug, baseUrl),
    title: t.title,
    status: t.status,
  }));
  (document as OpenAPIObject & Record<string, unknown>)['x-problem-types'] = types;
  enumerateProblemTypes(
    document,
    types.map((t) => t.type),
  );
  if (baseUrl === undefined) return;
  // Copies, not changes: the examples are the decorators' metadata, shared by every document built in the process.
  for (const pathItem of Object.values(document.paths)) {
    for (const operation of Object.values(pathItem) as { responses?: Record<string, ResponseEntry> }[]) {
      for (const [status, response] of Object.entries(operation?.responses ?? {})) {
        const media = response.content?.[PROBLEM_MEDIA_TYPE];
        if (!media?.examples) continue;
        const examples = Object.fromEntries(
          Object.entries(media.examples).map(([name, example]) => {
            const value = example.value as ProblemDocument;
            return [name, { ...example, value: { ...value, type: `${baseUrl}${value.type}` } }];
          }),
        );
        operation.responses![status] = {
          ...response,
          content: { ...response.content, [PROBLEM_MEDIA_TYPE]: { ...media, examples } },
        };
      }
    }
  }
}
