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
const PROBLEM_BASE = 'https://errors.example/';

/** A stable URI naming one class of error. */
export const problemType = (slug: string): string => `${PROBLEM_BASE}${slug}`;

/**
 * The base of every error the domain raises on purpose. Services and strategies throw
 * these; the global filter turns them into problem documents. Repositories never throw
 * them: a repository reports facts, a service decides what they mean to a client.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;
  abstract readonly slug: string;
  abstract readonly title: string;
  readonly errors?: FieldError[];
  /** Extra response headers, such as WWW-Authenticate or Retry-After. */
  readonly headers: Record<string, string> = {};

  constructor(detail: string) {
    // An expected answer (a 4xx), never logged with a stack: capturing one was the largest
    // cost of refusing a request (CPU profile of 401s for malformed API keys).
    const stackTraceLimit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(detail);
    Error.stackTraceLimit = stackTraceLimit;
    this.name = new.target.name;
  }
}

export class ValidationFailedError extends DomainError {
  readonly status = 400;
  readonly slug = 'validation';
  readonly title = 'Invalid request';
  constructor(
    override readonly errors: FieldError[],
    detail = 'The request has invalid or unexpected values; see errors.',
  ) {
    super(detail);
  }
}

export class NotFoundError extends DomainError {
  readonly status = 404;
  readonly slug = 'not-found';
  readonly title = 'Not found';
}

export class ConflictError extends DomainError {
  readonly status = 409;
  readonly slug: string;
  readonly title: string;
  constructor(slug: string, title: string, detail: string) {
    super(detail);
    this.slug = slug;
    this.title = title;
  }
}

export class UnauthenticatedError extends DomainError {
  readonly status = 401;
  readonly slug = 'unauthenticated';
  readonly title = 'Authentication required';
  constructor(detail: string, challenge: string) {
    super(detail);
    this.headers['WWW-Authenticate'] = challenge;
  }
}

export class ForbiddenError extends DomainError {
  readonly status = 403;
  readonly slug = 'forbidden';
  readonly title = 'Forbidden';
}

export class ServiceUnavailableError extends DomainError {
  readonly status = 503;
  readonly slug = 'unavailable';
  readonly title = 'Service unavailable';
  constructor(detail: string, retryAfterSeconds: number) {
    super(detail);
    this.headers['Retry-After'] = String(retryAfterSeconds);
  }
}
