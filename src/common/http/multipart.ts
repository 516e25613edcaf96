import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, OnModuleInit, UseInterceptors } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { FastifyAdapter, RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { catchError, concatMap, from, Observable, throwError } from 'rxjs';
import { DomainError } from '../problem/problem';

const ACCEPTS_MULTIPART = 'acceptsMultipart';

/** A multipart body sent to a route that reads JSON: the same 415 Fastify gives any other type. */
export class UnsupportedMediaTypeError extends DomainError {
  readonly status = 415;
  readonly slug = 'unsupported-media-type';
  readonly title = 'Unsupported media type';
  constructor() {
    super('Send the body as application/json.');
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
    const raw = context.switchToHttp().getRequest<FastifyRequest>().raw;
    return next.handle().pipe(
      concatMap((result) => from(discardRest(raw).then(() => result))),
      catchError((err) => from(discardRest(raw)).pipe(concatMap(() => throwError(() => err)))),
    );
  }
}

/**
 * Marks a route that reads a multipart/form-data body (an upload) itself, with
 * `request.parts()`. It runs before the route's pipes, so even a bad parameter waits for the body.
 */
export const AcceptsMultipart = () => applyDecorators(RouteConfig({ [ACCEPTS_MULTIPART]: true }), UseInterceptors(DiscardUnreadBody));

/**
 * Registers @fastify/multipart, which adds its content-type parser to the whole server.
 * Without the hook below a JSON route would then take a multipart request as an empty body
 * instead of refusing it; with it, every route not marked @AcceptsMultipart() answers such
 * a request with the 415 it gave before. JSON parsing and its 64 KiB limit are not touched:
 * multipart bodies never go through that parser.
 */
@Injectable()
export class MultipartOnlyWhereAccepted implements OnModuleInit {
  constructor(private readonly adapterHost: HttpAdapterHost<FastifyAdapter>) {}

  onModuleInit(): void {
    // Before Fastify is ready, so the plugin loads with the others.
    this.adapterHost.httpAdapter.useMultipart();
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Hooks added before Fastify is ready apply to every route, also those already declared.
    fastify.addHook('preValidation', async (request: FastifyRequest) => {
      const isMultipart = (request as FastifyRequest & { isMultipart?: () => boolean }).isMultipart?.() === true;
      const config = request.routeOptions.config as unknown as Record<string, unknown> | undefined;
      if (isMultipart && config?.[ACCEPTS_MULTIPART] !== true) throw new UnsupportedMediaTypeError();
    });
  }
}
