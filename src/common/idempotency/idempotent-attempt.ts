import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash } from 'node:crypto';

import type { KeyMaterial } from './answer-cipher';

/** What a replay sends again: the first answer's status, the headers that matter, and its body. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  /** The body as JSON text. */
  body: string;
}

/** Thrown out of the handler when a claim made during it finds the first answer: the interceptor sends it. */
export class ReplayFound extends Error {
  constructor(readonly answer: KeptAnswer) {
    super('The first answer of this Idempotency-Key is replayed');
    this.name = 'ReplayFound';
  }
}

/** One request carrying an Idempotency-Key, while its handler runs. */
export interface IdempotentAttempt {
  readonly keys: KeyMaterial;
  readonly token: string;
  claimed: boolean;
  /** Set once a transaction of the work has marked the claim (its COMMIT may still have failed). */
  maybeCommitted: boolean;
  /** False once the handler has answered: a transaction started later is none of its work. */
  active: boolean;
  /** Claims the key for the request with this part of the body (uploads claim once they have the bytes). */
  claimWithBody(bodyPart: string): Promise<void>;
}

const attempts = new AsyncLocalStorage<IdempotentAttempt>();

export const runAttempt = <T>(attempt: IdempotentAttempt, work: () => Promise<T>): Promise<T> =>
  attempts.run(attempt, work);

/**
 * For a route marked @Idempotent({ body: 'upload' }): claims the request's Idempotency-Key,
 * if it has one, once the uploaded bytes are known (their SHA-256 is part of what a retry
 * must repeat). Throws what a duplicate is answered with (a replay, 409 or 422), so call it
 * before the upload is stored.
 */
export async function claimIdempotentUpload(bytes: Buffer): Promise<void> {
  const attempt = attempts.getStore();
  if (attempt?.active && !attempt.claimed)
    await attempt.claimWithBody(createHash('sha256').update(bytes).digest('hex'));
}
