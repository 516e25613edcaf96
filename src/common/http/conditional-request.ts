import { applyDecorators, createParamDecorator, type ExecutionContext } from '@nestjs/common';
import { ApiHeader, type ApiHeaderOptions, ApiResponse, DECORATORS } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';

import { DomainError, ValidationFailedError } from '../problem/problem';
import { PRECONDITION_FAILED } from '../problem/problem-types';
import { ApiProblems, type ProblemResponse } from '../swagger/api-problems.decorator';
import { EntityTagged, responseCoding } from './compression';
import {
  type ChangeConditions,
  etagForCoding,
  type FailedCondition,
  ifMatchFailure,
  ifNoneMatchHit,
  parseCondition,
} from './etag';

/**
 * Conditional requests (RFC 9110, section 13) in one declaration and one helper. A resource
 * whose representation has a strong ETag describes its versions once (EntityTags); its GET says
 * @ConditionalGet(TAGS) and answers with sendTagged (304 or 200), its changes say
 * @ConditionalChange(TAGS), take @Conditions() and hand them to the service, which checks them
 * under its lock with failedChangeCondition and answers 412 with its own error. A malformed
 * If-Match or If-None-Match is a 400 wherever one is read (conditionHeader).
 */

type ConditionHeader = 'If-Match' | 'If-None-Match';

/** An If-Match or If-None-Match value outside RFC 9110's grammar: 400, naming the header. */
export class MalformedConditionError extends ValidationFailedError {
  constructor(header: ConditionHeader) {
    super(
      [
        {
          field: header,
          message: `${header} must be * alone or a comma-separated list of quoted entity tags ("…" or W/"…"), as ETag sends them`,
        },
      ],
      `The ${header} header is malformed.`,
    );
  }
}

/** The request's `header`, as sent, once it follows the grammar (else MalformedConditionError); undefined when absent. */
function conditionHeader(request: FastifyRequest, header: ConditionHeader): string | undefined {
  const value = request.headers[header.toLowerCase()];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || parseCondition(value) === undefined) throw new MalformedConditionError(header);
  return value;
}

/**
 * What a 412 says when If-Match named only weak tags or stale ones with a weak among them:
 * that If-Match compares strong tags, rather than that the resource changed (it may not have).
 */
const WEAK_IF_MATCH =
  'If-Match compares entity tags strongly, so a weak tag (W/"…") never matches. Send the ETag as GET answered it, without W/.';

/** The 412 detail of a failed If-Match or If-None-Match on `resource` ("Planet 14", "The API key"). */
export function preconditionFailedDetail(resource: string, failed: FailedCondition): string {
  switch (failed) {
    case 'weak If-Match':
      return `${resource} was not changed: ${WEAK_IF_MATCH}`;
    case 'If-Match':
      return `${resource} has changed since the version named in If-Match. GET it again, and send its new ETag if your change still applies.`;
    case 'If-None-Match':
      return `${resource} exists and matches If-None-Match (\`*\`, or one of its ETags), so it was not changed.`;
  }
}

/** What the document says of a resource's versions. */
export interface EntityTags {
  /** The resource as the texts name it: "planet", "key". */
  resource: string;
  /** The ETag header of its answers. */
  etag: { description: string; example: string };
  /** The headers its changes take, in the document's order (by default ifMatchOnChange, ifNoneMatchOnChange). */
  changeHeaders?: ApiHeaderOptions[];
  /** Its 412 (by default worded for `resource`, with the problem type's own example). */
  preconditionFailed?: Omit<ProblemResponse, 'types'>;
}

/** If-Match on a change, in the words of `resource` and of the `method` that changes it. */
export const ifMatchOnChange = (resource: string, method = 'PUT or PATCH'): ApiHeaderOptions => ({
  name: 'If-Match',
  required: false,
  description:
    `Optional. The ${resource}'s ETag from your last GET (or ${method}): the change is made only if the ${resource} is ` +
    `still as you read it, else 412 (a weak tag never matches). \`*\`: only if the ${resource} exists. A malformed ` +
    'value is a 400. Without it the change is unconditional.',
  schema: { type: 'string' },
});

/** If-None-Match on a change guards against overwriting what exists (RFC 9110, section 13.1.2). */
export const ifNoneMatchOnChange = (resource: string): ApiHeaderOptions => ({
  name: 'If-None-Match',
  required: false,
  description:
    `Optional. \`*\`: 412 because the ${resource} exists; ETags (compared weakly): 412 if one is the ${resource}'s ` +
    `current ETag. Checked after If-Match; a malformed value is a 400. On a ${resource} that does not exist the ` +
    'answer stays 404.',
  schema: { type: 'string', example: '*' },
});

const etagHeader = ({ etag }: EntityTags) => ({
  ETag: { description: etag.description, schema: { type: 'string', example: etag.example } },
});

type Responses = Record<string, { headers?: Record<string, unknown> }>;

/**
 * Adds ETag to the route's 200 or 201, which it declares below this decorator (decorators
 * apply bottom up): a route's own response replaces a response declared before it.
 */
const tagsSuccess =
  (tags: EntityTags): MethodDecorator =>
  (_target, key, descriptor) => {
    const handler = descriptor.value as object;
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, handler) as Responses | undefined;
    const status = ['200', '201'].find((s) => responses?.[s]);
    if (status === undefined || responses === undefined) {
      throw new Error(
        `${String(key)}: declare its success response below @ConditionalGet/@ConditionalChange, not above`,
      );
    }
    const success = responses[status];
    const headers = { ...success.headers, ...etagHeader(tags) };
    Reflect.defineMetadata(DECORATORS.API_RESPONSE, { ...responses, [status]: { ...success, headers } }, handler);
    return descriptor;
  };

/**
 * A read that answers a strong ETag, 304 to If-None-Match and 412 to an If-Match it fails (see
 * sendTagged). Goes above the route's 200, which gets the ETag header.
 */
export const ConditionalGet = (tags: EntityTags) =>
  applyDecorators(
    EntityTagged(),
    ApiHeader({
      name: 'If-None-Match',
      required: false,
      description:
        `ETags you hold (or \`*\`): if one is the ETag a 200 to this request would carry (the ${tags.resource}'s current ` +
        'one, with the coding it would be sent in), the answer is 304 without a body. ' +
        'A malformed value is a 400.',
      schema: { type: 'string' },
    }),
    ApiHeader({
      name: 'If-Match',
      required: false,
      description:
        `Optional. The ${tags.resource} is answered only if its current ETag is one of these (compared strongly), or ` +
        'with `*` if it exists; else 412. A malformed value is a 400.',
      schema: { type: 'string' },
    }),
    tagsSuccess(tags),
    ApiResponse({
      status: 304,
      description: `Not modified: the ${tags.resource} still has the ETag sent in If-None-Match.`,
      headers: etagHeader(tags),
    }),
    ApiProblems({
      types: [PRECONDITION_FAILED],
      description: `Precondition failed: the ${tags.resource}'s current ETag is not one If-Match names (or only weak tags were named).`,
      examples: [() => new ReadPreconditionFailedError('If-Match')],
    }),
  );

/**
 * A change (PUT, PATCH, DELETE) made only while its If-Match and If-None-Match hold (see
 * @Conditions()), else 412. Goes above the route's 200, which gets the ETag header; a 204
 * carries none.
 */
export const ConditionalChange = (tags: EntityTags) => {
  const { resource, changeHeaders = [ifMatchOnChange(resource), ifNoneMatchOnChange(resource)] } = tags;
  const answered: MethodDecorator = (target, key, descriptor) => {
    const responses = Reflect.getMetadata(DECORATORS.API_RESPONSE, descriptor.value as object) as Responses | undefined;
    return responses?.['204']
      ? descriptor
      : applyDecorators(EntityTagged(), tagsSuccess(tags))(target, key, descriptor);
  };
  return applyDecorators(
    ...changeHeaders.map((header) => ApiHeader(header)),
    answered,
    ApiProblems({
      types: [PRECONDITION_FAILED],
      description:
        `Precondition failed: the ${resource} has changed since the version named in If-Match (GET it again), ` +
        'If-Match named a weak tag (never a match), or If-None-Match is `*` or names its current ETag. Nothing was changed.',
      ...tags.preconditionFailed,
    }),
  );
};

/**
 * The If-Match and If-None-Match a change was sent with, for its service to check under its
 * lock; a malformed one is refused here, before any work (400).
 */
export const Conditions = createParamDecorator((_: unknown, context: ExecutionContext): ChangeConditions => {
  const request = context.switchToHttp().getRequest<FastifyRequest>();
  return { ifMatch: conditionHeader(request, 'If-Match'), ifNoneMatch: conditionHeader(request, 'If-None-Match') };
});

/** A read whose If-Match is false: 412, and no body. */
export class ReadPreconditionFailedError extends DomainError {
  constructor(failed: FailedCondition) {
    super(PRECONDITION_FAILED, preconditionFailedDetail('The resource', failed));
  }
}

/** The body a 200 would send: its type and length choose its coding (responseCoding). */
export interface SentBody {
  type: string;
  size: number;
}

/**
 * The conditions of a read, in RFC 9110's order (section 13.2.2): an If-Match it fails is a 412
 * (ReadPreconditionFailedError); then, when If-None-Match names the tag of the representation
 * this request would get (`etag` with the coding a 200 of `body` would get), answers 304
 * with that tag, the one a 200 would carry (section 15.4.5), and returns true.
 */
export async function notModified(reply: FastifyReply, etag: string, body: SentBody): Promise<boolean> {
  const ifMatch = conditionHeader(reply.request, 'If-Match');
  const failed = ifMatch === undefined ? undefined : ifMatchFailure(ifMatch, etag);
  if (failed) throw new ReadPreconditionFailedError(failed);
  const ifNoneMatch = conditionHeader(reply.request, 'If-None-Match');
  if (ifNoneMatch === undefined) return false;
  const current = etagForCoding(etag, responseCoding(reply.request, body.type, body.size));
  if (!ifNoneMatchHit(ifNoneMatch, current)) return false;
  await reply.status(304).header('ETag', current).send();
  return true;
}

const JSON_TYPE = 'application/json; charset=utf-8';

/** Answers a read of a tagged representation: 412 or 304 (see notModified), else 200 with its ETag. */
export async function sendTagged(reply: FastifyReply, etag: string, body: unknown): Promise<void> {
  // Serialized here, as send would, for the length that chooses its coding.
  const json = reply.serialize(body);
  if (await notModified(reply, etag, { type: JSON_TYPE, size: Buffer.byteLength(json) })) return;
  await reply.status(200).header('ETag', etag).type(JSON_TYPE).send(json);
}
