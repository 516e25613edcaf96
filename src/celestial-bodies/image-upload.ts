import type { Readable } from 'node:stream';

import { declareProblemExample } from '../common/problem';
import { IMAGE_TOO_LARGE, ImageTooLargeError, NotAnImageError } from './celestial-bodies.errors';

/** The contract's limit for one planet image. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
declareProblemExample(IMAGE_TOO_LARGE, () => new ImageTooLargeError(MAX_IMAGE_BYTES));

export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'] as const;
export type ImageType = (typeof IMAGE_TYPES)[number];

const startsWith = (head: Buffer, bytes: number[], at = 0) => bytes.every((b, i) => head[at + i] === b);
const ascii = (text: string) => [...text].map((c) => c.charCodeAt(0));

interface ImageFormat {
  type: ImageType;
  /** The start every file of this format has: more than its magic number, so a few stray bytes are not taken for an image. */
  hasHeader(head: Buffer): boolean;
  /** No file of this format that holds a picture is shorter. */
  minBytes: number;
}

/**
 * Not a decoder: enough to refuse what cannot be an image of the type we would serve it as
 * (e.g. the 3 bytes FF D8 FF), without parsing the whole file.
 */
const FORMATS: ImageFormat[] = [
  {
    type: 'image/png',
    // The signature, then the IHDR chunk, which must come first (length 13, type "IHDR").
    hasHeader: (head) =>
      startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, ...ascii('IHDR')]),
    // Signature, IHDR, the smallest IDAT and IEND.
    minBytes: 67,
  },
  {
    type: 'image/jpeg',
    // SOI (FF D8), then the first segment's marker (FF C0 to FF FE).
    hasHeader: (head) => startsWith(head, [0xff, 0xd8, 0xff]) && head.length > 3 && head[3] >= 0xc0 && head[3] <= 0xfe,
    // A baseline JPEG holds at least a 64-entry quantisation table, its Huffman tables and a frame header.
    minBytes: 100,
  },
  {
    type: 'image/gif',
    // Signature, then the 7-byte logical screen descriptor.
    hasHeader: (head) => (startsWith(head, ascii('GIF87a')) || startsWith(head, ascii('GIF89a'))) && head.length >= 13,
    // Header, screen descriptor, one image descriptor, its smallest data and the trailer.
    minBytes: 26,
  },
  {
    type: 'image/webp',
    // RIFF container of type WEBP whose first chunk is VP8 (lossy), VP8L (lossless) or VP8X (extended).
    hasHeader: (head) =>
      startsWith(head, ascii('RIFF')) &&
      startsWith(head, ascii('WEBPVP8'), 8) &&
      [0x20, 0x4c, 0x58].includes(head[15]) &&
      head.length >= 20,
    // Container header, chunk header and the smallest VP8L bitstream.
    minBytes: 26,
  },
];

/** Bytes needed to recognise every accepted format by its header. */
export const SNIFF_BYTES = 20;

/**
 * The image type its first bytes prove, or null. What the client declared is never
 * trusted: a text file called photo.png with type image/png is still text.
 */
export function detectImageType(head: Buffer): ImageType | null {
  return FORMATS.find((format) => format.hasHeader(head))?.type ?? null;
}

/** True when a whole file (not only its start) can be an image of its detected type. */
export function isPlausibleImage(data: Buffer): boolean {
  const format = FORMATS.find((f) => f.hasHeader(data));
  return format !== undefined && data.length >= format.minBytes;
}

export interface ReceivedImage {
  data: Buffer;
  contentType: ImageType;
}

/**
 * Reads an uploaded file while it arrives: refuses it as soon as its first bytes are not an
 * accepted image, or as soon as it passes `maxBytes`, so at most `maxBytes` are ever held.
 * The stream's own errors (a body that ends early) are left to the caller, which knows
 * where the stream comes from.
 */
export async function readImage(upload: Readable, maxBytes = MAX_IMAGE_BYTES): Promise<ReceivedImage> {
  const chunks: Buffer[] = [];
  let size = 0;
  let sniffed = false;
  try {
    for await (const chunk of upload as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new ImageTooLargeError(maxBytes);
      chunks.push(chunk);
      if (!sniffed && size >= SNIFF_BYTES) {
        if (!detectImageType(Buffer.concat(chunks))) throw new NotAnImageError();
        sniffed = true;
      }
    }
  } catch (err) {
    upload.destroy();
    throw err;
  }
  const data = Buffer.concat(chunks);
  const contentType = detectImageType(data);
  if (!contentType || !isPlausibleImage(data)) throw new NotAnImageError();
  return { data, contentType };
}
