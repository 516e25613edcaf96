import type { IncomingMessage } from 'node:http';

import {
  applyDecorators,
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  UseInterceptors,
} from '@nestjs/common';
import type { FastifyReply, FastifyRequest, preParsingHookHandler, preValidationHookHandler } from 'fastify';
import { catchError, concatMap, from, Observable, throwError } from 'rxjs';

import { DomainError, UnsupportedMediaTypeError } from '../problem/problem';
import { declareProblemExample, REQUEST_TIMEOUT } from '../problem/problem-types';
import { unsupportedMediaTypeFor } from './json-body';
import { routeConfigEntry, withRouteConfig } from './route-config';

const ACCEPTS_MULTIPART = 'acceptsMultipart';

export { UnsupportedMediaTypeError };

const isFormData = (contentType: string | undefined): boolean =>
  contentType?.split(';')[0].trim().toLowerCase() === 'multipart/form-data';

/**
 * The client stopped sending its request body for longer than a route allows. The same
 * problem type as the 408 for a request past REQUEST_TIMEOUT_MS; the connection is closed.
 */
export class BodyStalledError extends DomainError {
  constructor(idleMs: number) {
    super(REQUEST_TIMEOUT, `No data of the request body arrived for ${idleMs} ms; send it without pausing.`);
  }
}
declareProblemExample(REQUEST_TIMEOUT, () => new BodyStalledError(10_000));

/**
 * Runs `read`, which consumes the request body, and fails with BodyStalledError when no
 * byte of the body arrives for `idleMs` meanwhile. The clock runs only while `read` runs:
 * before it, an unread body is held back by the server (TCP flow control), not the client.
 * A stalled `read` is left to end with the connection, which the 408 closes.
 */
export async function readBodyWithIdleLimit<T>(
  raw: IncomingMessage,
  idleMs: number,
  read: () => Promise<T>,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let rearm = () => {};
  const stalled = new Promise<never>((_, reject) => {
    rearm = () => {
      clearTimeout(timer);
      timer = setTimeout(() => reject(new BodyStalledError(idleMs)), idleMs);
    };
  });
  rearm();
  // Listening only after `read` has started (it pipes the body synchronously): a 'data'
  // listener on a stream that nobody reads yet would start its flow and lose the bytes.
  const reading = read();
  raw.on('data', rearm);
  try {
    return await Promise.race([reading, stalled]);
  } finally {
    clearTimeout(timer);
    raw.off('data', rearm);
  }
}

/** Discards what is left of a request body; resolves once it has all arrived (or the client left). */
function discardRest(raw: IncomingMessage): Promise<void> {
  raw.unpipe();
  if (raw.readableEnded || raw.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    raw.once('end', () => resolve());
    raw.once('close', () => resolve());
    raw.once('error', () => resolve());
    raw.resume();
  });
}

/**
 * Answers only once the client has sent the whole body, which the handler may have left
 * unread (a 403 before reading, a part refused halfway). Answering while the client is
 * still uploading would make Node.js close a connection that is not kept alive under it
 * (EPIPE / ECONNRESET on the client) instead of giving it the problem document. The rest
 * is read and dropped, never held.
 */
@Injectable()
class DiscardUnreadBody implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const http = context.switchToHttp();
    const raw = http.getRequest<FastifyRequest>().raw;
    return next.handle().pipe(
      concatMap((result: unknown) => from(discardRest(raw).then(() => result))),
      catchError((err: unknown) => {
        // Waiting for the rest of a stalled body would hold the socket until REQUEST_TIMEOUT_MS:
        // the 408 is sent now and the connection closed after it.
        if (err instanceof BodyStalledError) {
          http.getResponse<FastifyReply>().header('Connection', 'close');
          return throwError(() => err);
        }
        return from(discardRest(raw)).pipe(concatMap(() => throwError(() => err)));
      }),
    );
  }
}

/**
 * Marks a route that reads a multipart/form-data body (an upload) itself, with
 * `request.parts()`, and reads nothing else: any other body, JSON included, is answered with
 * a 415 whose detail is `formDetail` (what to send instead; refuseAllButForms,
 * refuseUnexpectedForms). The interceptor runs before the route's pipes, so even a bad
 * parameter waits for the body.
 */
export const AcceptsMultipart = (formDetail = 'Send the body as multipart/form-data.') =>
  applyDecorators(withRouteConfig({ [ACCEPTS_MULTIPART]: formDetail }), UseInterceptors(DiscardUnreadBody));

function formDetailOf(request: FastifyRequest): string | undefined {
  const detail = routeConfigEntry(request.routeOptions.config, ACCEPTS_MULTIPART);
  return typeof detail === 'string' ? detail : undefined;
}

/*
 * @fastify/multipart adds its content-type parser to the whole server. Without the
 * preValidation hook below a JSON route would then take a multipart request as an empty body
 * instead of refusing it; with it, every route not marked @AcceptsMultipart() answers such a
 * request with a 415. JSON parsing and its 64 KiB limit are not touched: multipart bodies never
 * go through that parser. The other way round, a route marked @AcceptsMultipart() refuses any
 * other body before it is parsed (preParsing), so a JSON body is not taken for a form without
 * its file, and the 415 says to send a form. Both run on every request: callback-style, where
 * an async hook costs a promise each.
 */

/** preParsing: a route marked @AcceptsMultipart() takes a multipart/form-data body only. */
export const refuseAllButForms: preParsingHookHandler = (request, _reply, payload, done) => {
  const formDetail = formDetailOf(request);
  if (formDetail !== undefined && !isFormData(request.headers['content-type']))
    done(new UnsupportedMediaTypeError(formDetail));
  else done(null, payload);
};

/** preValidation: a multipart body sent to a route not marked @AcceptsMultipart() is refused. */
export const refuseUnexpectedForms: preValidationHookHandler = (request, _reply, done) => {
  const isMultipart = (request as FastifyRequest & { isMultipart?: () => boolean }).isMultipart?.() === true;
  if (!isMultipart || formDetailOf(request) !== undefined) done();
  else done(unsupportedMediaTypeFor(request));
};
