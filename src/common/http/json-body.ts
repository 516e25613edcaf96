import { isUtf8 } from 'node:buffer';

import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyRequest, preParsingHookHandler, RawServerDefault } from 'fastify';

import { DomainError, type FieldError, UnsupportedMediaTypeError } from '../problem/problem';
import { MALFORMED_JSON, UNSUPPORTED_MEDIA_TYPE } from '../problem/problem-types';
import { routeConfigEntry, withRouteConfig } from './route-config';

const ACCEPTS_MERGE_PATCH = 'acceptsMergePatch';
const MERGE_PATCH = 'application/merge-patch+json';

/**
 * For a PATCH that takes a JSON Merge Patch (RFC 7396) as `application/merge-patch+json`
 * beside `application/json`: the same bytes, parsed by the same parser with the same limits
 * and checks. Other routes answer that type with the 415 of any type they do not read.
 */
export const AcceptsMergePatch = () => withRouteConfig({ [ACCEPTS_MERGE_PATCH]: true });

/** Whether the route takes a merge patch besides JSON (@AcceptsMergePatch()). */
const acceptsMergePatch = (request: FastifyRequest): boolean =>
  routeConfigEntry(request.routeOptions.config, ACCEPTS_MERGE_PATCH) === true;

/** The 415 of a route that reads JSON, for a body of another type: naming the merge patch where it is taken. */
export const unsupportedMediaTypeFor = (request: FastifyRequest): UnsupportedMediaTypeError =>
  acceptsMergePatch(request) ? UnsupportedMediaTypeError.forMergePatch() : new UnsupportedMediaTypeError();

/** A body of a type this route does not read (here: a merge patch sent where none is taken). */
class NotJsonBodyError extends DomainError {
  constructor() {
    super(UNSUPPORTED_MEDIA_TYPE, 'Send the body as application/json.');
  }
}

/**
 * A body sent with a content coding (gzip, br…): no body is read compressed, so it would be
 * read as the wrong bytes. 415, with Accept-Encoding saying what is taken (RFC 9110, 15.5.16).
 */
class EncodedBodyError extends DomainError {
  constructor(coding: string) {
    super(
      UNSUPPORTED_MEDIA_TYPE,
      `The body is sent with Content-Encoding ${JSON.stringify(coding.slice(0, 40))}; send it uncompressed, with no Content-Encoding.`,
    );
    this.headers['Accept-Encoding'] = 'identity';
  }
}

const READS_BODY = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether the request has a body the routes read: chunked, or a Content-Length other than 0 (RFC 9112, 6.3). */
const hasBody = ({ method, headers }: FastifyRequest): boolean =>
  READS_BODY.has(method) &&
  (headers['transfer-encoding'] !== undefined || Number(headers['content-length'] ?? 0) !== 0);

/** preParsing: a request body with a Content-Encoding other than identity is refused, on every route. */
export const refuseEncodedBodies: preParsingHookHandler = (request, _reply, payload, done) => {
  const coding = request.headers['content-encoding']?.trim();
  if (coding && coding.toLowerCase() !== 'identity' && hasBody(request)) done(new EncodedBodyError(coding));
  else done(null, payload);
};

/** A JSON body whose bytes are not UTF-8: not JSON text at all (RFC 8259, section 8.1). */
export class BodyNotUtf8Error extends DomainError {
  override readonly errors: FieldError[] = [
    { field: 'body', message: 'body must be UTF-8; it holds a byte sequence that is not' },
  ];

  constructor() {
    super(MALFORMED_JSON, 'The request body is not valid UTF-8.');
  }
}

/** A JSON body declared in another charset: JSON is UTF-8 (RFC 8259, section 8.1), and is read as such. */
export class BodyCharsetError extends DomainError {
  constructor(charset: string) {
    super(
      UNSUPPORTED_MEDIA_TYPE,
      `A JSON body is UTF-8; this one is declared as charset=${charset.slice(0, 40)}. Send it as UTF-8, with charset=utf-8 or no charset.`,
    );
  }
}

const isMergePatch = (contentType: string | undefined): boolean =>
  contentType?.split(';')[0].trim().toLowerCase() === MERGE_PATCH;

/** The charset parameter of a Content-Type, lower-cased, when there is one. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*"?([\w!#$%&'*+.^`|~-]+)/i.exec(contentType ?? '');
  return match?.[1].toLowerCase();
}

/**
 * Fastify's JSON parser, behind a check that the body is UTF-8. The parser decodes a
 * buffer leniently, so bytes that are not UTF-8 became U+FFFD and were stored as such,
 * silently changed; a lone surrogate escaped as \uD800 is refused later, by the
 * validation pipe, as it survives parsing. isUtf8 is one native pass over at most 64 KiB.
 */
export function registerJsonBodyParser(app: NestFastifyApplication, bodyLimit: number): void {
  const fastify: FastifyInstance = app.getHttpAdapter().getInstance();
  const parseJson = fastify.getDefaultJsonParser('error', 'error');
  app.useBodyParser<RawServerDefault>(['application/json', MERGE_PATCH], { bodyLimit }, (request, body, done) => {
    if (!acceptsMergePatch(request) && isMergePatch(request.headers['content-type'])) {
      done(new NotJsonBodyError(), undefined);
      return;
    }
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
      done(new BodyCharsetError(charset), undefined);
      return;
    }
    if (!isUtf8(body)) {
      done(new BodyNotUtf8Error(), undefined);
      return;
    }
    // Decoding is lossless now; the parser would decode the buffer the same way.
    void parseJson(request, body.toString('utf8'), done);
  });
}
