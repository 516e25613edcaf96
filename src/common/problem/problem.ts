import { DATABASE_UNAVAILABLE, type DatabaseFault } from './database-faults';
import {
  BAD_REQUEST,
  declareProblemExample,
  FORBIDDEN,
  INTERNAL,
  MALFORMED_JSON,
  METHOD_NOT_ALLOWED,
  NOT_FOUND,
  PAYLOAD_TOO_LARGE,
  type ProblemType,
  problemTypeUri,
  UNAUTHENTICATED,
  UNAVAILABLE,
  UNSUPPORTED_MEDIA_TYPE,
  VALIDATION,
} from './problem-types';

/** An RFC 9457 problem document, the body of every error response. */
export interface FieldError {
  field: string;
  message: string;
}

export interface ProblemDocument {
  type: string;
  title: string;
  status: number;
  detail: string;
  instance?: string;
  errors?: FieldError[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json; charset=utf-8';

/**
 * Bounds of a problem's `errors`, so that its size does not grow with the request: at most
 * MAX_LISTED_ERRORS entries (the detail says when more were found), each field and message
 * cut to these lengths.
 */
export const MAX_LISTED_ERRORS = 20;
export const MAX_ERROR_FIELD_LENGTH = 200;
export const MAX_ERROR_MESSAGE_LENGTH = 300;

/** `text` cut to `max` characters, the last an ellipsis when cut; never half a surrogate pair. */
function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const end = /[\uD800-\uDBFF]/.test(text[max - 2]) ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

const boundedError = ({ field, message }: FieldError): FieldError => ({
  field: bounded(field, MAX_ERROR_FIELD_LENGTH),
  message: bounded(message, MAX_ERROR_MESSAGE_LENGTH),
});

/** A problem document of `type`: its URI (see problemTypeUri), title and status are the registry's. */
export function problemOf(
  type: ProblemType,
  detail: string,
  baseUrl: string | undefined,
  errors?: FieldError[],
): ProblemDocument {
  return {
    type: problemTypeUri(type.slug, baseUrl),
    title: type.title,
    status: type.status,
    detail,
    ...(errors ? { errors: errors.slice(0, MAX_LISTED_ERRORS).map(boundedError) } : {}),
  };
}

/**
 * The base of every error the domain raises on purpose. Services and strategies throw
 * these; the global filter turns them into problem documents. Repositories never throw
 * them: a repository reports facts, a service decides what they mean to a client. The
 * status and title are those of the registered problem type, so an error cannot send a
 * type the registry (and with it the OpenAPI document) does not know.
 */
export abstract class DomainError extends Error {
  readonly status: number;
  readonly slug: string;
  readonly title: string;
  readonly errors?: FieldError[];
  /** Extra response headers, such as WWW-Authenticate or Retry-After. */
  readonly headers: Record<string, string> = {};

  constructor(
    readonly problemType: ProblemType,
    detail: string,
  ) {
    // An expected answer (a 4xx), never logged with a stack: capturing one would be the
    // largest cost of refusing a request, such as a malformed API key.
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = new.target.name;
    ({ status: this.status, slug: this.slug, title: this.title } = problemType);
  }
}

export class ValidationFailedError extends DomainError {
  constructor(
    override readonly errors: FieldError[],
    detail = 'The request has invalid or unexpected values; see errors.',
  ) {
    super(
      VALIDATION,
      errors.length > MAX_LISTED_ERRORS
        ? `${detail} More than ${MAX_LISTED_ERRORS} were found; errors lists the first ${MAX_LISTED_ERRORS}.`
        : detail,
    );
  }
}

export class NotFoundError extends DomainError {
  constructor(detail: string) {
    super(NOT_FOUND, detail);
  }
}

/** A request that conflicts with the current state; each kind of conflict has its own type. */
export abstract class ConflictError extends DomainError {}

export class UnauthenticatedError extends DomainError {
  constructor(detail: string, challenge: string) {
    super(UNAUTHENTICATED, detail);
    this.headers['WWW-Authenticate'] = challenge;
  }
}

export class ForbiddenError extends DomainError {
  constructor(detail: string) {
    super(FORBIDDEN, detail);
  }
}

export class ServiceUnavailableError extends DomainError {
  constructor(detail: string, retryAfterSeconds: number) {
    super(UNAVAILABLE, detail);
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}

/** A transient database fault (see databaseFault): 503, retry after the time it says. */
export class DatabaseFaultError extends ServiceUnavailableError {
  constructor(fault: DatabaseFault) {
    super(fault.detail, fault.retryAfterSeconds);
  }
}

/** An unknown route (Fastify's router found none). */
export class RouteNotFoundError extends NotFoundError {
  constructor(method: string, path: string) {
    super(`Cannot ${method} ${path}`);
  }
}

/** A known path asked with a method it does not have; `allowed` are those it has. */
export class MethodNotAllowedError extends DomainError {
  constructor(method: string, path: string, allowed: readonly string[]) {
    super(METHOD_NOT_ALLOWED, `${method} is not allowed on ${path}; allowed: ${allowed.join(', ')}.`);
    this.headers.Allow = allowed.join(', ');
  }
}

/**
 * A URL the router refuses, by the code of its error (Fastify's messages echo the whole URL,
 * which may be kilobytes long): a malformed percent-escape, or a path segment over the limit.
 */
export class MalformedUrlError extends DomainError {
  constructor(code: unknown, maxParamLength?: number) {
    const reason =
      code === 'FST_ERR_BAD_URL'
        ? 'a percent-escape in it is not %XX, or does not decode to UTF-8.'
        : code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? `a path parameter in it is longer than ${maxParamLength} characters.`
          : 'the router cannot read it.';
    super(BAD_REQUEST, `The URL is malformed: ${reason}`);
  }
}

/** A JSON body that does not parse; `parserMessage` says where parsing stopped. */
export class MalformedJsonError extends DomainError {
  override readonly errors: FieldError[];

  constructor(parserMessage: string) {
    super(MALFORMED_JSON, 'The request body is not valid JSON.');
    this.errors = [{ field: 'body', message: parserMessage }];
  }
}

export class PayloadTooLargeError extends DomainError {
  constructor() {
    super(PAYLOAD_TOO_LARGE, 'The request body is larger than this endpoint accepts.');
  }
}

/**
 * A body of a type the route does not read: a multipart body sent to a route that reads JSON
 * (the same 415 Fastify gives any other type there), or anything but a form sent to an upload.
 */
export class UnsupportedMediaTypeError extends DomainError {
  constructor(detail = 'Send the body as application/json.') {
    super(UNSUPPORTED_MEDIA_TYPE, detail);
  }

  /** The 415 of a route that also takes a JSON Merge Patch (@AcceptsMergePatch()). */
  static forMergePatch(): UnsupportedMediaTypeError {
    return new UnsupportedMediaTypeError('Send the body as application/json or application/merge-patch+json.');
  }
}

/** What a client is told of a failure of the server's own: nothing of its cause. */
export class InternalError extends DomainError {
  constructor() {
    super(INTERNAL, 'The server failed to handle the request. It has been logged.');
  }
}

/** The parser's message for a body such as `{,`, as JSON.parse words it on this Node.js. */
export function jsonParseMessage(text: string): string {
  try {
    JSON.parse(text);
    return '';
  } catch (err) {
    return (err as Error).message;
  }
}

declareProblemExample(BAD_REQUEST, () => new MalformedUrlError('FST_ERR_BAD_URL'));
declareProblemExample(NOT_FOUND, () => new RouteNotFoundError('GET', '/planets/42/moons'));
declareProblemExample(
  METHOD_NOT_ALLOWED,
  () => new MethodNotAllowedError('PATCH', '/planets/42', ['GET', 'HEAD', 'PUT', 'DELETE']),
);
declareProblemExample(MALFORMED_JSON, () => new MalformedJsonError(jsonParseMessage('{,')));
declareProblemExample(PAYLOAD_TOO_LARGE, () => new PayloadTooLargeError());
declareProblemExample(UNSUPPORTED_MEDIA_TYPE, () => new UnsupportedMediaTypeError());
declareProblemExample(INTERNAL, () => new InternalError());
declareProblemExample(UNAVAILABLE, () => new DatabaseFaultError(DATABASE_UNAVAILABLE));
