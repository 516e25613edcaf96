import { HttpException, HttpStatus } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { ImageTooLargeError, NotAnImageError } from './celestial-bodies.errors';

/** The contract's limit for one planet image. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

/** Bytes needed to recognise every accepted format. */
const SNIFF_BYTES = 12;

const startsWith = (head: Buffer, bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

/**
 * The image type its first bytes (magic numbers) prove, or null. What the client declared
 * is never trusted: a text file called photo.png with type image/png is still text.
 */
export function detectImageType(head: Buffer): ImageType | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return 'image/png';
  if (startsWith(head, [0xff, 0xd8, 0xff])) return 'image/jpeg';
  if (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) return 'image/gif';
  if (startsWith(head, ascii('RIFF')) && startsWith(head, ascii('WEBP'), 8)) return 'image/webp';
  return null;
}

export interface ReceivedImage {
  data: Buffer;
  contentType: ImageType;
}

/**
 * Reads an uploaded file while it arrives: refuses it as soon as its first bytes are not an
 * accepted image, or as soon as it passes `maxBytes`, so at most `maxBytes` are ever held.
 */
export async function readImage(upload: Readable, maxBytes = MAX_IMAGE_BYTES): Promise<ReceivedImage> {
  const chunks: Buffer[] = [];
  let size = 0;
  let contentType: ImageType | null = null;
  try {
    for await (const chunk of upload as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new ImageTooLargeError(maxBytes);
      chunks.push(chunk);
      if (!contentType && size >= SNIFF_BYTES) {
        contentType = detectImageType(Buffer.concat(chunks));
        if (!contentType) throw new NotAnImageError();
      }
    }
  } catch (err) {
    upload.destroy();
    // The multipart parser's own size limit (a backstop set just above ours) ends the stream with a 413.
    if (err instanceof HttpException && err.getStatus() === HttpStatus.PAYLOAD_TOO_LARGE) throw new ImageTooLargeError(maxBytes);
    throw err;
  }
  const data = Buffer.concat(chunks);
  contentType ??= detectImageType(data);
  if (!contentType) throw new NotAnImageError();
  return { data, contentType };
}
