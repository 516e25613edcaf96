import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { QueryFailedError } from 'typeorm';

import { AppConfig } from '../../config/app-config';
import { isClientAbort } from '../http/client-error';
import { unsupportedMediaTypeFor } from '../http/json-body';
import { pathOf } from '../http/location';
import { RouteMethods } from '../http/route-methods';
import { applyStandardHeaders } from '../http/standard-headers';
import { scrubKeys } from '../logging/scrub';
import { databaseFault } from './database-faults';
import {
  DatabaseFaultError,
  DomainError,
  InternalError,
  MalformedJsonError,
  MalformedUrlError,
  MethodNotAllowedError,
  PayloadTooLargeError,
  ProblemDocument,
  problemOf,
  RouteNotFoundError,
} from './problem';
import { problemOfError, sendProblem } from './problem-reply';
import { type ProblemType, problemTypeForStatus } from './problem-types';

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message: string;
}

interface Answer {
  problem: ProblemDocument;
  headers: Record<string, string>;
}

export interface RouterErrorOptions {
  /** This deployment's public base URL, for absolute type URIs (AppConfig.ownBaseUrl). */
  baseUrl?: string;
  /** Headers added to every answer (a sandbox's X-API-Environment). */
  extraHeaders?: Record<string, string>;
  /** The router's longest path parameter, which a refused URL's answer names. */
  maxParamLength: number;
}

/**
 * Fastify's router rejects some URLs before any Nest code runs (a malformed percent
 * escape); they get the same problem format.
 */
export function routerErrorHandler({ baseUrl, extraHeaders, maxParamLength }: RouterErrorOptions) {
  return (error: Error & { code?: unknown }, request: FastifyRequest, reply: FastifyReply): void => {
    if (extraHeaders) reply.headers(extraHeaders);
    applyStandardHeaders(request, reply);
    sendProblem(request, reply, problemOfError(new MalformedUrlError(error.code, maxParamLength), baseUrl));
  };
}

/**
 * The one place where anything thrown becomes an HTTP response: an RFC 9457 problem
 * document of a registered type. Expected errors keep their message; anything unexpected
 * is logged with its stack and answered with a 500 that says nothing of its cause.
 */
@Catch()
@Injectable()
export class ProblemFilter implements ExceptionFilter {
  private readonly baseUrl: string | undefined;

  constructor(
    config: AppConfig,
    private readonly routeMethods: RouteMethods,
  ) {
    this.baseUrl = config.ownBaseUrl;
  }

  /**
   * preHandler, the first: unknown routes are answered here, in the last hook before a
   * handler, rather than by Nest's not-found handler, which throws a NotFoundException for this
   * filter to catch: the exception's stack capture alone would be a large part of the CPU of a
   * 404. The answer is the same; every earlier hook (request id, standard headers, the body's
   * content type and size) has run, and a failure there still reaches catch() below.
   */
  readonly answerUnknownRoute: preHandlerHookHandler = (request, reply, done) => {
    const shadowed = this.shadowedRoute(request);
    if (shadowed) return sendProblem(request, reply, shadowed.problem, shadowed.headers);
    // The router lets a last parameter match nothing (`/api-keys/`): that names no resource either
    // (a wildcard's `*` may: `/docs/` is the page).
    if (!request.is404 && !hasEmptyParameter(request.params)) return done();
    const { problem, headers } = this.unknownRoute(request, this.notFound(request));
    sendProblem(request, reply, problem, headers);
  };

  /** The 405 of a method the literal route at this path lacks, found by a route with a parameter instead. */
  private shadowedRoute(request: FastifyRequest): Answer | undefined {
    const routeUrl = request.routeOptions.url;
    const shadowed = routeUrl?.includes(':') && this.routeMethods.shadowedAt(routeUrl, () => pathOf(request.url));
    return shadowed ? this.answer(new MethodNotAllowedError(request.method, pathOf(request.url), shadowed)) : undefined;
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<FastifyRequest>();
    const reply = ctx.getResponse<FastifyReply>();
    const { problem, headers } = this.unknownRoute(request, this.toProblem(exception, request));
    if (reply.sent) return;
    sendProblem(request, reply, problem, headers);
  }

  private problem(type: ProblemType, detail: string, headers: Record<string, string> = {}): Answer {
    return { problem: problemOf(type, detail, this.baseUrl), headers };
  }

  /** The answer to an error the code raises (and whose examples the OpenAPI document shows). */
  private answer(error: DomainError): Answer {
    return { problem: problemOfError(error, this.baseUrl), headers: error.headers };
  }

  private toProblem(exception: unknown, request: FastifyRequest): Answer {
    if (exception instanceof DomainError) return this.answer(exception);
    // Nest wraps Fastify's own 4xx errors (bad JSON, body too large) in an HttpException.
    const fastifyCause =
      exception instanceof HttpException ? (exception.cause as FastifyLikeError | undefined) : undefined;
    if (fastifyCause?.code?.startsWith('FST_')) return this.fromFastifyError(fastifyCause, request);
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status >= 500) return this.internal(exception, request);
      return this.problem(problemTypeForStatus(status), this.httpExceptionDetail(exception));
    }
    // Before the database faults: its ECONNRESET is the client's socket, not the database's.
    if (isClientAbort(exception, request)) {
      request.log.info(`Request aborted by the client on ${request.method} ${request.routeOptions?.url ?? ''}`);
      return this.problem(
        problemTypeForStatus(400),
        'The request did not arrive whole: the client closed the connection.',
      );
    }
    const fault = databaseFault(exception);
    if (fault) {
      const cause: unknown = exception instanceof QueryFailedError ? exception.driverError : exception;
      request.log.warn(
        `Database fault on ${request.method} ${request.routeOptions?.url ?? ''}: ${(cause as Error)?.message ?? String(cause)}`,
      );
      return this.answer(new DatabaseFaultError(fault));
    }
    const fastifyError = exception as FastifyLikeError;
    if (
      typeof fastifyError?.statusCode === 'number' &&
      fastifyError.statusCode >= 400 &&
      fastifyError.statusCode < 500
    ) {
      return this.fromFastifyError(fastifyError, request);
    }
    return this.internal(exception, request);
  }

  /**
   * Fastify parses the body of a request, and runs the hooks, before it finds that no route
   * matches: whatever client error that finds (a body that is not JSON, too large, a
   * multipart form), an unknown route is a 404, and a known path asked with a method it
   * does not have a 405 that lists those it has (a literal path too, found by an item route).
   */
  private unknownRoute(request: FastifyRequest, answer: Answer): Answer {
    const { status } = answer.problem;
    if (status >= 500) return answer;
    if (!request.is404) return this.shadowedRoute(request) ?? answer;
    const path = pathOf(request.url);
    const allowed = this.routeMethods.allowedAt(path);
    if (allowed.length > 0) {
      return this.answer(new MethodNotAllowedError(request.method, path, allowed));
    }
    return status === 404 ? answer : this.notFound(request);
  }

  private notFound(request: FastifyRequest): Answer {
    return this.answer(new RouteNotFoundError(request.method, pathOf(request.url)));
  }

  private fromFastifyError(error: FastifyLikeError, request: FastifyRequest): Answer {
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return this.answer(new MalformedJsonError(error.message));
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return this.answer(new PayloadTooLargeError());
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return this.answer(unsupportedMediaTypeFor(request));
      default:
        // Fastify's own 4xx messages describe the client's mistake and carry no internals.
        return this.problem(problemTypeForStatus(error.statusCode ?? 400), error.message);
    }
  }

  private httpExceptionDetail(exception: HttpException): string {
    const response = exception.getResponse();
    if (typeof response === 'string') return response;
    const message = (response as { message?: unknown }).message;
    if (Array.isArray(message)) return message.join('; ');
    if (typeof message === 'string') return message;
    return exception.message;
  }

  private internal(exception: unknown, request: FastifyRequest): Answer {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    request.log.error({ err }, `Unhandled error on ${request.method} ${scrubKeys(pathOf(request.url))}`);
    return this.answer(new InternalError());
  }
}

const hasEmptyParameter = (params: unknown): boolean =>
  Object.entries(params ?? {}).some(([name, value]) => name !== '*' && value === '');
