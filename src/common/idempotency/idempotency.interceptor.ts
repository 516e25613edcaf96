import { randomUUID } from 'node:crypto';

import { CallHandler, ExecutionContext, Injectable, Logger, NestInterceptor } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { from, lastValueFrom, Observable } from 'rxjs';

import { type BeforeCommit, runWithBeforeCommit } from '../../database/before-commit';
import { clientAddressKey } from '../rate-limit/client-address';
import { AnswerCipher } from './answer-cipher';
import {
  IdempotencyKeyReusedError,
  IdempotentAnswerLostError,
  IdempotentRequestInProgressError,
} from './idempotency.errors';
import { IdempotencyRepository } from './idempotency.repository';
import { idempotencyKeyOf } from './idempotency-key-header';
import { type IdempotentAttempt, type KeptAnswer, ReplayFound, runAttempt } from './idempotent-attempt';

export const IDEMPOTENT_OPTIONS = 'idempotent';

export interface IdempotentOptions {
  /** Whose keys these are: the authenticated caller (region or user), or the client address on a public route. */
  scope: 'caller' | 'client-address';
  /** 'upload': the route claims with claimIdempotentUpload once it has read the bytes. */
  body?: 'json' | 'upload';
}

/** The header a replayed answer carries (as Stripe's does). */
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** How long an answer is kept, and a key cannot be used for another request. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;
/**
 * How long a claim whose work has not committed keeps others from taking it over (an
 * instance that died mid-request holds it no longer). The holder's commit is fenced by its
 * claim token, so a takeover can never make the work happen twice, however slow the holder.
 */
export const CLAIM_LEASE_MS = 60_000;
const KEPT_HEADERS = ['location', 'cache-control'];

/** Sorted keys, so that the same JSON sent with its fields in another order is the same request. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Whose keys these are: one region key's or one user's, never shared. A replay hands over the
 * first answer (a new key's secret, too), so it is only for whoever made the request: the same
 * Idempotency-Key from another key of the region is another request. A region key's scope holds
 * its permissions too: a replay skips the route's checks of what may be granted, so a key that
 * has since been narrowed replays nothing it could no longer ask for.
 */
function scopeOf(request: FastifyRequest, scope: IdempotentOptions['scope']): string {
  if (scope === 'client-address') return `client:${clientAddressKey(request.ip)}`;
  const caller = (
    request as FastifyRequest & {
      user?: { regionId?: string; apiKeyId?: string; id?: number; permissions?: string[] };
    }
  ).user;
  if (caller?.regionId && caller.apiKeyId) {
    const permissions = [...(caller.permissions ?? [])].sort().join(',');
    return `region:${caller.regionId}:key:${caller.apiKeyId}:${permissions}`;
  }
  if (caller?.id !== undefined) return `user:${caller.id}`;
  throw new Error('@Idempotent({ scope: "caller" }) on a route without an authenticated caller');
}

/**
 * Idempotency-Key (IETF httpapi draft; Stripe's header) for a route that creates: see
 * @Idempotent(). The claim is committed before the work; the work's own transactions mark
 * it `committed` along with their change (runWithBeforeCommit); the answer is then kept,
 * encrypted. Without the header the route runs as it would without this.
 */
@Injectable()
export class IdempotencyInterceptor implements NestInterceptor {
  private readonly logger = new Logger('Idempotency');
  private warned = false;

  constructor(
    private readonly reflector: Reflector,
    private readonly claims: IdempotencyRepository,
    private readonly cipher: AnswerCipher,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const key = idempotencyKeyOf(request.raw);
    if (key === undefined) return next.handle();
    const options = this.reflector.get<IdempotentOptions>(IDEMPOTENT_OPTIONS, context.getHandler());
    const reply = context.switchToHttp().getResponse<FastifyReply>();
    return from(this.serve(request, reply, key, options, next));
  }

  private async serve(
    request: FastifyRequest,
    reply: FastifyReply,
    key: string,
    options: IdempotentOptions,
    next: CallHandler,
  ): Promise<unknown> {
    this.warnIfEphemeral();
    const keys = this.cipher.keysFor(scopeOf(request, options.scope), key);
    const described = [request.method, request.routeOptions.url, canonicalJson(request.params)].join('\n');
    const attempt: IdempotentAttempt = {
      keys,
      token: randomUUID(),
      claimed: false,
      maybeCommitted: false,
      active: true,
      claimWithBody: (bodyPart) => this.claim(attempt, `${described}\n${bodyPart}`),
    };
    const markCommitted: BeforeCommit = async (manager) => {
      if (!attempt.active || !attempt.claimed) return;
      if (!(await this.claims.markCommitted(manager, keys.keyHash, attempt.token)))
        throw new IdempotentRequestInProgressError();
      attempt.maybeCommitted = true;
    };
    try {
      if (options.body !== 'upload') await attempt.claimWithBody(canonicalJson(request.body));
      const body: unknown = await runAttempt(attempt, () =>
        runWithBeforeCommit(markCommitted, () =>
          lastValueFrom<unknown, undefined>(next.handle(), { defaultValue: undefined }),
        ),
      );
      attempt.active = false;
      await this.keep(attempt, reply, body);
      return body;
    } catch (err) {
      attempt.active = false;
      if (err instanceof ReplayFound) return this.replay(reply, err.answer);
      if (attempt.claimed && !attempt.maybeCommitted) {
        await this.claims.release(keys.keyHash, attempt.token).catch((e: unknown) => this.logger.warn(e));
      }
      throw err;
    }
  }

  // Said when the first key arrives, not at start: the operator CLI builds this too, and
  // has no use for it.
  private warnIfEphemeral(): void {
    if (!this.cipher.ephemeral || this.warned) return;
    this.warned = true;
    this.logger.warn(
      'JWT_SECRET is not set: answers kept for Idempotency-Key retries are encrypted with a random secret made at start. ' +
        'After a restart, or on another instance, a retry is told its answer is lost (it is never carried out twice).',
    );
  }

  /** Holds the key for this attempt, or throws what a duplicate gets (ReplayFound, 409, 422). */
  private async claim(attempt: IdempotentAttempt, described: string): Promise<void> {
    const { keys } = attempt;
    const fingerprint = this.cipher.fingerprint(keys, described);
    // A row found gone (expired or released meanwhile) is claimed again; twice is plenty.
    for (let tries = 0; tries < 3; tries++) {
      if (await this.claims.claim(keys.keyHash, fingerprint, attempt.token, CLAIM_LEASE_MS, IDEMPOTENCY_TTL_MS)) {
        attempt.claimed = true;
        return;
      }
      const held = await this.claims.find(keys.keyHash);
      if (!held) continue;
      if (!held.fingerprint.equals(fingerprint)) throw new IdempotencyKeyReusedError();
      // Committed and about to keep its answer: the answer is on its way, not lost.
      if (held.state === 'running' || (held.state === 'committed' && held.leaseLive))
        throw new IdempotentRequestInProgressError();
      const plain = held.state === 'done' && held.answer ? this.cipher.decrypt(keys, held.answer) : null;
      if (plain === null) throw new IdempotentAnswerLostError();
      throw new ReplayFound(JSON.parse(plain) as KeptAnswer);
    }
    throw new IdempotentRequestInProgressError();
  }

  /** Keeps the answer for replays. A failure here costs replays, not the answer: the client still gets it. */
  private async keep(attempt: IdempotentAttempt, reply: FastifyReply, body: unknown): Promise<void> {
    if (!attempt.claimed) return;
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    const answer: KeptAnswer = { status: reply.statusCode, headers, body: JSON.stringify(body) ?? 'null' };
    try {
      await this.claims.storeAnswer(
        attempt.keys.keyHash,
        attempt.token,
        this.cipher.encrypt(attempt.keys, JSON.stringify(answer)),
      );
    } catch (err) {
      this.logger.error({ err }, 'Could not keep the answer of an idempotent request; a retry will be told it is lost');
    }
  }

  private replay(reply: FastifyReply, answer: KeptAnswer): unknown {
    reply.status(answer.status);
    for (const [name, value] of Object.entries(answer.headers)) reply.header(name, value);
    reply.header(REPLAYED_HEADER, 'true');
    return JSON.parse(answer.body) as unknown;
  }
}
