import type { FastifyReply, FastifyRequest } from 'fastify';

import { pathOf } from '../http/location';
import { type DomainError, PROBLEM_CONTENT_TYPE, type ProblemDocument, problemOf } from './problem';

/** Writes a problem document as the response. */
export function sendProblem(
  request: FastifyRequest,
  reply: FastifyReply,
  problem: ProblemDocument,
  headers: Record<string, string> = {},
): void {
  const path = pathOf(request.url);
  problem.instance = path;
  // Details that quote the request URL (the router's "Cannot GET ..." and malformed-URL
  // messages) quote its path only: a query string may carry a secret, as logs assume too.
  if (path !== request.url) problem.detail = problem.detail.split(request.url).join(path);
  reply.status(problem.status).headers(headers).type(PROBLEM_CONTENT_TYPE).send(problem);
}

/** The problem document of an expected error; `baseUrl` makes its type URI absolute. */
export function problemOfError(error: DomainError, baseUrl?: string): ProblemDocument {
  return problemOf(error.problemType, error.message, baseUrl, error.errors);
}

/**
 * Answers with an expected error's problem document, where no exception filter is in the
 * way: a hook that refuses a request itself, for less than a throw through Nest costs.
 */
export function sendDomainError(
  request: FastifyRequest,
  reply: FastifyReply,
  error: DomainError,
  baseUrl?: string,
): void {
  sendProblem(request, reply, problemOfError(error, baseUrl), error.headers);
}
