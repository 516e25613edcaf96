import type { DomainError } from './problem';

/**
 * Makes the example of a problem type: the error the code raises for it, built by the same
 * class (or factory) that builds the real one, with sample arguments.
 */
export type ProblemExample = () => DomainError;

/**
 * One class of error the service can answer with: the `type`, `title` and `status` of its
 * problem documents, and what its page at /problems/<slug> tells a client.
 */
export interface ProblemType {
  /** The last segment of the type URI, `/problems/<slug>`. */
  readonly slug: string;
  readonly status: number;
  readonly title: string;
  /** What happened, for the type's page. */
  readonly meaning: string;
  /** What a client should do about it. */
  readonly action: string;
  /**
   * The example of the type's page and of the operations that give none of their own: the
   * error as the code raises it. A type whose errors are made where the type cannot be
   * imported from gets it there, with declareProblemExample.
   */
  readonly example?: ProblemExample;
}

const SLUG = /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/;
const registry = new Map<string, ProblemType>();
const examples = new Map<string, ProblemExample>();

/**
 * Declares a problem type and adds it to the one registry the problem filter, the pages
 * at /problems and the OpenAPI document are made from. Common types are declared below;
 * a feature declares its own in its errors file. A slug is declared once.
 */
export function defineProblemType(type: ProblemType): ProblemType {
  if (!SLUG.test(type.slug))
    throw new Error(`Problem type slug "${type.slug}" must be lower-case words joined by hyphens`);
  if (registry.has(type.slug)) throw new Error(`Problem type "${type.slug}" is declared twice`);
  if (!Number.isInteger(type.status) || type.status < 400 || type.status > 599)
    throw new Error(`Problem type "${type.slug}" has status ${type.status}`);
  const frozen = Object.freeze({ ...type });
  registry.set(type.slug, frozen);
  return frozen;
}

/**
 * Gives a type its example where its error class is declared, when that module cannot be
 * imported by the type's (the common types, whose errors are made by the filter, the
 * validation pipe or a feature). Once per type.
 */
export function declareProblemExample(type: ProblemType, example: ProblemExample): void {
  if (examples.has(type.slug) || registry.get(type.slug)?.example)
    throw new Error(`Problem type "${type.slug}" has an example already`);
  examples.set(type.slug, example);
}

/** The error that exemplifies `type`; every registered type has one once the application is loaded. */
export function problemExampleOf(type: ProblemType): DomainError {
  const example = type.example ?? examples.get(type.slug);
  if (!example) throw new Error(`Problem type "${type.slug}" has no example: declare one with its error`);
  const error = example();
  if (error.slug !== type.slug) {
    throw new Error(`The example of problem type "${type.slug}" is an error of type "${error.slug}"`);
  }
  return error;
}

export const problemTypeBySlug = (slug: string): ProblemType | undefined => registry.get(slug);

/** Every declared type, by status and then slug. */
export const allProblemTypes = (): ProblemType[] =>
  [...registry.values()].sort((a, b) => a.status - b.status || a.slug.localeCompare(b.slug));

/** The path of a type's page. */
export const problemTypePath = (slug: string): string => `/problems/${slug}`;

/**
 * The `type` URI of a problem document: absolute against this deployment's public base
 * URL when one is configured, else relative to whichever host answered.
 */
export const problemTypeUri = (slug: string, baseUrl: string | undefined): string =>
  `${baseUrl ?? ''}${problemTypePath(slug)}`;

export const BAD_REQUEST = defineProblemType({
  slug: 'bad-request',
  status: 400,
  title: 'Bad request',
  meaning:
    'The request could not be read as HTTP: a URL with a malformed percent-escape, a malformed request line or header, or a body that does not match its Content-Length.',
  action:
    'Fix how the request is built (percent-encode the path, send well-formed headers); sending it again unchanged will fail again.',
});

export const VALIDATION = defineProblemType({
  slug: 'validation',
  status: 400,
  title: 'Invalid request',
  meaning:
    'The request is well-formed, but a path parameter, query parameter, header or body field has a value this route does not accept, or the body has a field it does not know. `errors` names each one.',
  action: 'Correct every field listed in `errors` (each with what is wrong with it) and send the request again.',
});

export const MALFORMED_JSON = defineProblemType({
  slug: 'malformed-json',
  status: 400,
  title: 'Malformed JSON',
  meaning:
    'The body was sent as `application/json` but is not valid JSON (or is empty). The error in `errors` says where parsing stopped.',
  action: 'Send a valid JSON document; build it with a JSON serializer rather than by joining strings.',
});

export const UNAUTHENTICATED = defineProblemType({
  slug: 'unauthenticated',
  status: 401,
  title: 'Authentication required',
  meaning:
    'The route needs credentials and none were sent, or those sent are malformed, unknown, wrong, expired or revoked. `WWW-Authenticate` names what the route accepts.',
  action:
    'Send valid credentials: a region API key in `X-API-Key` for region routes; Basic email and password, or a Bearer token from `POST /auth/token`, for user routes. Do not retry with the same credentials.',
});

export const FORBIDDEN = defineProblemType({
  slug: 'forbidden',
  status: 403,
  title: 'Forbidden',
  meaning:
    'The credentials are valid, but they do not allow this request, for example changing a planet another user created.',
  action: 'Do not retry with the same credentials; act on your own resources, or as the user who owns this one.',
});

export const NOT_FOUND = defineProblemType({
  slug: 'not-found',
  status: 404,
  title: 'Not found',
  meaning:
    'Nothing exists at this path: an unknown route, or a resource id that does not exist (or is not visible to you).',
  action: 'Check the path and the id. Ids come from the responses that list or create the resource.',
});

export const METHOD_NOT_ALLOWED = defineProblemType({
  slug: 'method-not-allowed',
  status: 405,
  title: 'Method not allowed',
  meaning: 'The path exists, but not with this HTTP method. The `Allow` header lists the methods it has.',
  action: 'Use one of the methods in `Allow`, as the API reference describes them.',
});

export const REQUEST_TIMEOUT = defineProblemType({
  slug: 'request-timeout',
  status: 408,
  title: 'Request timeout',
  meaning:
    "The request did not arrive in time: its headers and body took longer than the server allows, or an upload's body stopped arriving for too long. The connection is closed.",
  action: 'Send the whole request without pausing; on a slow link, send smaller bodies.',
});

export const PRECONDITION_FAILED = defineProblemType({
  slug: 'precondition-failed',
  status: 412,
  title: 'Precondition failed',
  meaning:
    'The request was conditional (`If-Match`), and the resource no longer has the entity tag it names: someone changed it since you read it.',
  action:
    'Read the resource again, apply your change to what it is now, and send it with the new `ETag` in `If-Match`.',
});

export const PAYLOAD_TOO_LARGE = defineProblemType({
  slug: 'payload-too-large',
  status: 413,
  title: 'Request body too large',
  meaning: 'The request body is larger than this route accepts (a JSON body is at most 64 KiB).',
  action: 'Send a smaller body; to upload much data, split it over several requests where the API allows it.',
});

export const UNSUPPORTED_MEDIA_TYPE = defineProblemType({
  slug: 'unsupported-media-type',
  status: 415,
  title: 'Unsupported media type',
  meaning:
    'The body has a `Content-Type` this route does not read: JSON routes read `application/json`, uploads `multipart/form-data`.',
  action: 'Send the body in the media type the route documents, with a matching `Content-Type`.',
});

export const TOO_MANY_REQUESTS = defineProblemType({
  slug: 'too-many-requests',
  status: 429,
  title: 'Too many requests',
  meaning:
    'A rate limit was reached: too many sign-ups or failed sign-ins from your address, or too many uploads of yours at once. `Retry-After` says when to try again.',
  action: 'Wait the number of seconds in `Retry-After` before sending it again; do not retry in a tight loop.',
});

export const HEADERS_TOO_LARGE = defineProblemType({
  slug: 'headers-too-large',
  status: 431,
  title: 'Request headers too large',
  meaning: 'The request headers together are larger than the server accepts. The connection is closed.',
  action: 'Send fewer or shorter headers (large cookies or tokens are the usual cause).',
});

export const INTERNAL = defineProblemType({
  slug: 'internal',
  status: 500,
  title: 'Internal server error',
  meaning:
    "The server failed to handle the request, for a reason that is not the request's fault. The cause is logged with the request id, and not told to the client.",
  action: 'Retry later; if it persists, report it with the `X-Request-ID` of the response.',
});

export const UNAVAILABLE = defineProblemType({
  slug: 'unavailable',
  status: 503,
  title: 'Service unavailable',
  meaning:
    'The service cannot answer right now: its database is busy or unreachable, it is shutting down, or too much of a resource is in use. Nothing was changed.',
  action: 'Retry after the number of seconds in `Retry-After`.',
});

const BY_STATUS = new Map<number, ProblemType>(
  [
    BAD_REQUEST,
    UNAUTHENTICATED,
    FORBIDDEN,
    NOT_FOUND,
    METHOD_NOT_ALLOWED,
    REQUEST_TIMEOUT,
    PRECONDITION_FAILED,
    PAYLOAD_TOO_LARGE,
    UNSUPPORTED_MEDIA_TYPE,
    TOO_MANY_REQUESTS,
    HEADERS_TOO_LARGE,
    INTERNAL,
    UNAVAILABLE,
  ].map((t) => [t.status, t]),
);

/**
 * The generic type for an HTTP status that comes without one (a framework's own 4xx); a
 * status with no type of its own gets its class's (bad-request or internal), never an
 * invented one, and is sent with that type's status.
 */
export const problemTypeForStatus = (status: number): ProblemType =>
  BY_STATUS.get(status) ?? (status >= 400 && status < 500 ? BAD_REQUEST : INTERNAL);
