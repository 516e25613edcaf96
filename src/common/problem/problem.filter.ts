import { ArgumentsHost, Catch, ExceptionFilter, HttpException, HttpStatus } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { QueryFailedError } from 'typeorm';
import { applyStandardHeaders } from '../http/http-hooks';
import { scrubKeys } from '../logging/scrub';
import { databaseFault } from './database-faults';
import { DomainError, PROBLEM_CONTENT_TYPE, ProblemDocument, problemType } from './problem';

const STATUS_SLUGS: Record<number, string> = {
  400: 'bad-request',
  401: 'unauthenticated',
  403: 'forbidden',
  404: 'not-found',
  405: 'method-not-allowed',
  406: 'not-acceptable',
  409: 'conflict',
  413: 'payload-too-large',
  415: 'unsupported-media-type',
  429: 'too-many-requests',
  500: 'internal',
  503: 'unavailable',
};

interface FastifyLikeError {
  statusCode?: number;
  code?: string;
  message: string;
}

/** Writes a problem document as the response. */
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  problem: ProblemDocument,
  headers: Record<string, string> = {},
): void {
  const path = request.url.split('?')[0];
  problem.instance = path;
  // Details that quote the request URL (the router's "Cannot GET ..." and malformed-URL
  // messages) quote its path only: a query string may carry a secret, as logs assume too.
  if (path !== request.url) problem.detail = problem.detail.split(request.url).join(path);
  reply.status(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/**
 * Fastify's router rejects some URLs before any Nest code runs (a malformed percent
 * escape); they get the same problem format.
 */
export function routerErrorHandler(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  answerRouterError(error, request, reply);
}

/** routerErrorHandler that adds `extraHeaders` (a sandbox's X-API-Environment) to its answers. */
export function routerErrorHandlerWith(extraHeaders: Record<string, string>): typeof routerErrorHandler {
  return (error, request, reply) => {
    reply.headers(extraHeaders);
    answerRouterError(error, request, reply);
  };
}

function answerRouterError(error: Error, request: FastifyRequest, reply: FastifyReply): void {
  applyStandardHeaders(request, reply);
  sendProblem(request, reply, {
    type: problemType('bad-request'),
    title: 'Bad request',
    status: 400,
    detail: `The URL is malformed: ${error.message}`,
  });
}

/**
 * The one place where anything thrown becomes an HTTP response: an RFC 9457 problem
 * document. Expected errors keep their message; anything unexpected is logged with its
 * stack and answered with a 500 that says nothing of its cause.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<FastifyRequest>();
    const reply = ctx.getResponse<FastifyReply>();
    const { problem, headers } = this.unknownRoute(request, this.toProblem(exception, request));
    if (reply.sent) return;
    sendProblem(request, reply, problem, headers);
  }

  private toProblem(exception: unknown, request: FastifyRequest): { problem: ProblemDocument; headers: Record<string, string> } {
    if (exception instanceof DomainError) {
      return {
        problem: {
          type: problemType(exception.slug),
          title: exception.title,
          status: exception.status,
          detail: exception.message,
          ...(exception.errors ? { errors: exception.errors } : {}),
        },
        headers: exception.headers,
      };
    }
    // Nest wraps Fastify's own 4xx errors (bad JSON, body too large) in an HttpException.
    const fastifyCause = exception instanceof HttpException ? (exception.cause as FastifyLikeError | undefined) : undefined;
    if (fastifyCause?.code?.startsWith('FST_')) return { problem: this.fromFastifyError(fastifyCause), headers: {} };
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status >= 500) return this.internal(exception, request);
      return { problem: this.fromStatus(status, this.httpExceptionDetail(exception)), headers: {} };
    }
    const fault = databaseFault(exception);
    if (fault) {
      const cause = exception instanceof QueryFailedError ? exception.driverError : exception;
      request.log.warn(`Database fault on ${request.method} ${request.routeOptions?.url ?? ''}: ${(cause as Error)?.message ?? String(cause)}`);
      return { problem: this.fromStatus(503, fault.detail), headers: { 'Retry-After': String(fault.retryAfterSeconds) } };
    }
    const fastifyError = exception as FastifyLikeError;
    if (typeof fastifyError?.statusCode === 'number' && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
      return { problem: this.fromFastifyError(fastifyError), headers: {} };
    }
    return this.internal(exception, request);
  }

  /**
   * Fastify parses the body of a request, and runs the hooks, before it finds that no route
   * matches: whatever client error that finds (a body that is not JSON, too large, a
   * multipart form), an unknown route is a 404.
   */
  private unknownRoute(request: FastifyRequest, answer: { problem: ProblemDocument; headers: Record<string, string> }) {
    const { status } = answer.problem;
    if (!request.is404 || status === 404 || status >= 500) return answer;
    return { problem: this.fromStatus(404, `Cannot ${request.method} ${request.url.split('?')[0]}`), headers: {} };
  }

  private fromFastifyError(error: FastifyLikeError): ProblemDocument {
    const status = error.statusCode ?? 400;
    switch (error.code) {
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        return {
          ...this.fromStatus(400, 'The request body is not valid JSON.'),
          type: problemType('malformed-json'),
          errors: [{ field: 'body', message: error.message }],
        };
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        return this.fromStatus(413, 'The request body is larger than this endpoint accepts.');
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        return this.fromStatus(415, 'Send the body as application/json.');
      default:
        // Fastify's own 4xx messages describe the client's mistake and carry no internals.
        return this.fromStatus(status, error.message);
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

  private fromStatus(status: number, detail: string): ProblemDocument {
    return {
      type: problemType(STATUS_SLUGS[status] ?? `http-${status}`),
      title: (HttpStatus[status] ?? 'Error')
        .toLowerCase()
        .split('_')
        .map((w, i) => (i === 0 ? w[0].toUpperCase() + w.slice(1) : w))
        .join(' '),
      status,
      detail,
    };
  }

  private internal(exception: unknown, request: FastifyRequest) {
    const err = exception instanceof Error ? exception : new Error(String(exception));
    request.log.error({ err }, `Unhandled error on ${request.method} ${scrubKeys(request.url.split('?')[0])}`);
    return {
      problem: this.fromStatus(500, 'The server failed to handle the request. It has been logged.'),
      headers: {},
    };
  }
}
