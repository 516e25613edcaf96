import type { Multipart } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';

import { closedMidRequest, readBodyWithIdleLimit } from '../common/http';
import { DomainError } from '../common/problem';
import { MalformedUploadError, MissingImageError, UnexpectedFormPartError } from './celestial-bodies.errors';
import { MAX_IMAGE_BYTES, readImage, type ReceivedImage } from './image-upload';

/** The form's one part. */
export const IMAGE_FIELD = 'image';

/** What the 415 for any other body says to send. */
export const IMAGE_FORM_DETAIL = `Send the body as multipart/form-data with one part: the image file in the field "${IMAGE_FIELD}".`;

type PartsOptions = NonNullable<Parameters<FastifyRequest['parts']>[0]>;

export interface ImageFormLimits {
  maxBytes?: number;
  /** Longest pause between two pieces of the body (BodyStalledError, 408, past it). */
  idleTimeoutMs: number;
}

/**
 * Reads a multipart/form-data upload that must hold exactly one part: a file in the field
 * "image". Any other part, before or after it, is refused by name: parser limits would drop
 * it silently instead, and the client would believe it was taken. The whole form is parsed
 * before the image is returned, so a body that breaks after the file is refused too.
 * Nothing but the file is kept, and at most `maxBytes` of it; a body that pauses for longer
 * than `idleTimeoutMs` is given up on.
 */
export function readImageForm(
  request: FastifyRequest,
  { maxBytes = MAX_IMAGE_BYTES, idleTimeoutMs }: ImageFormLimits,
): Promise<ReceivedImage> {
  return readBodyWithIdleLimit(request.raw, idleTimeoutMs, () => readForm(request, maxBytes));
}

async function readForm(request: FastifyRequest, maxBytes: number): Promise<ReceivedImage> {
  if (!request.isMultipart()) throw new MissingImageError();
  const options = {
    // One byte over ours, so that readImage() sees the file is too large. Text fields are refused unread.
    limits: { fileSize: maxBytes + 1, fieldSize: 1024 },
    // Past the limit the parser only truncates the file: readImage() answers the 413.
    throwFileSizeLimit: false,
  } as PartsOptions;
  const parts = request.parts(options);
  try {
    const first = await parts.next();
    if (first.done) throw new MissingImageError();
    const part = first.value;
    if (part.type !== 'file' || part.fieldname !== IMAGE_FIELD) throw refuse(part);
    const image = await readImage(part.file, maxBytes);
    const extra = await parts.next();
    if (!extra.done) throw refuse(extra.value);
    return image;
  } catch (err) {
    throw asClientError(err, request);
  }
}

function refuse(part: Multipart): UnexpectedFormPartError {
  // Nobody will read this file: without this the parser would wait for a reader.
  if (part.type === 'file') part.file.destroy();
  return new UnexpectedFormPartError(part.fieldname, part.type === 'file');
}

/**
 * The parser fails with plain errors ("Unexpected end of multipart data", a missing
 * boundary, a connection reset): all describe the body the client sent, so they are its
 * 400, not a 500. A client that went away never sees the answer; that is worth an info
 * line, not an error.
 */
function asClientError(err: unknown, request: FastifyRequest): unknown {
  if (err instanceof DomainError) return err;
  request.log.info(
    { err },
    closedMidRequest(request) ? 'Upload aborted by the client' : 'Malformed multipart upload refused',
  );
  return new MalformedUploadError();
}
