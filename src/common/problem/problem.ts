import {
  FORBIDDEN,
  NOT_FOUND,
  type ProblemType,
  problemTypeUri,
  UNAUTHENTICATED,
  UNAVAILABLE,
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
    ...(errors ? { errors } : {}),
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
    super(VALIDATION, detail);
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
