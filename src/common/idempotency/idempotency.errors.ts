import { defineProblemType, DomainError, ValidationFailedError } from '../problem';

export const IDEMPOTENCY_KEY_HEADER = 'Idempotency-Key';

export const IDEMPOTENCY_KEY_REUSED = defineProblemType({
  slug: 'idempotency-key-reused',
  status: 422,
  title: 'Idempotency-Key reused for another request',
  meaning:
    'This Idempotency-Key was already used, within the last 24 hours, for a different request: another body, or another route or path. A key names one request, and its answer is kept for that request only.',
  action: 'Use a new key (a random UUID) for each new request; send a key again only to retry the very same request.',
  example: () => new IdempotencyKeyReusedError(),
});

export const IDEMPOTENT_REQUEST_IN_PROGRESS = defineProblemType({
  slug: 'idempotent-request-in-progress',
  status: 409,
  title: 'Request with this Idempotency-Key in progress',
  meaning:
    'A request with this Idempotency-Key is still being carried out (a retry sent before the first attempt was answered). Nothing was done for this one.',
  action: "Retry with the same key after the time given in Retry-After: you then get the first attempt's answer.",
  example: () => new IdempotentRequestInProgressError(),
});

export const IDEMPOTENT_ANSWER_LOST = defineProblemType({
  slug: 'idempotent-answer-lost',
  status: 409,
  title: 'Request carried out, its answer lost',
  meaning:
    'The request with this Idempotency-Key was carried out (what it created exists), but the server stopped before it could keep the answer, or can no longer read the answer it kept. Sending the request again with this key will not do it a second time.',
  action:
    "Do not send the request again with a new key: look the result up instead (for example the region's keys and events, or your planets). A new key's secret cannot be shown again; roll or delete that key if you need its secret.",
  example: () => new IdempotentAnswerLostError(),
});

export class IdempotencyKeyReusedError extends DomainError {
  constructor() {
    super(
      IDEMPOTENCY_KEY_REUSED,
      'This Idempotency-Key was used for a different request; use a new key for a new request.',
    );
  }
}

/**
 * A duplicate of a request still at work. Retry-After is a second: a create takes
 * milliseconds, and the lease (up to a minute) only bounds a holder that died.
 */
export class IdempotentRequestInProgressError extends DomainError {
  constructor() {
    super(
      IDEMPOTENT_REQUEST_IN_PROGRESS,
      'A request with this Idempotency-Key is still in progress; retry after 1 second.',
    );
    this.headers['Retry-After'] = '1';
  }
}

export class IdempotentAnswerLostError extends DomainError {
  constructor() {
    super(
      IDEMPOTENT_ANSWER_LOST,
      'The request with this Idempotency-Key was carried out, but its answer was lost; it will not be carried out again.',
    );
  }
}

export const malformedIdempotencyKey = (message: string): ValidationFailedError =>
  new ValidationFailedError(
    [{ field: IDEMPOTENCY_KEY_HEADER, message }],
    `The ${IDEMPOTENCY_KEY_HEADER} header is malformed; see errors.`,
  );
