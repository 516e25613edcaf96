import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';

import { ImageTooLargeError, NotAnImageError } from '../../src/celestial-bodies/celestial-bodies.errors';
import { detectImageType, isPlausibleImage, readImage } from '../../src/celestial-bodies/image-upload';

const fixture = (name: string) => readFileSync(join(process.cwd(), 'test', 'fixtures', name));

describe('detectImageType', () => {
  it.each([
    ['mars.png', 'image/png'],
    ['jupiter.jpg', 'image/jpeg'],
    ['neptune.gif', 'image/gif'],
    ['pluto.webp', 'image/webp'],
  ])('recognises %s as %s by its bytes', (name, type) => {
    expect(detectImageType(fixture(name))).toBe(type);
  });

  it.each([
    ['text', Buffer.from('This is plain text pretending to be a picture.')],
    ['nothing', Buffer.alloc(0)],
    ['half a PNG signature', fixture('mars.png').subarray(0, 4)],
    ['a RIFF file that is not WebP (WAV)', Buffer.from('RIFF\x24\x00\x00\x00WAVEfmt ', 'latin1')],
    ['a PDF', Buffer.from('%PDF-1.7\n')],
    ['the 3-byte JPEG start FF D8 FF', Buffer.from([0xff, 0xd8, 0xff])],
    ['a JPEG start not followed by a marker', Buffer.from([0xff, 0xd8, 0xff, 0x00, 0, 0, 0, 0])],
    ['the PNG signature alone', fixture('mars.png').subarray(0, 8)],
    [
      'a PNG signature whose first chunk is not IHDR',
      Buffer.concat([fixture('mars.png').subarray(0, 12), Buffer.from('IDAT')]),
    ],
    ['a GIF signature without its screen descriptor', Buffer.from('GIF89a\x01\x00', 'latin1')],
    ['a RIFF WEBP file without a VP8 chunk', Buffer.from('RIFF\x1a\x00\x00\x00WEBPJUNK\x00\x00\x00\x00', 'latin1')],
  ])('refuses %s', (_, bytes) => {
    expect(detectImageType(bytes)).toBeNull();
  });
});

describe('isPlausibleImage', () => {
  it.each(['mars.png', 'jupiter.jpg', 'neptune.gif', 'pluto.webp'])('takes the real file %s', (name) => {
    expect(isPlausibleImage(fixture(name))).toBe(true);
  });

  it.each([
    ['a JPEG cut to 20 bytes', fixture('jupiter.jpg').subarray(0, 20)],
    ['a PNG cut after IHDR', fixture('mars.png').subarray(0, 33)],
    ['a GIF cut after its screen descriptor', fixture('neptune.gif').subarray(0, 13)],
    ['a WebP cut after its chunk header', fixture('pluto.webp').subarray(0, 20)],
  ])('refuses %s, shorter than any image of its type', (_, bytes) => {
    expect(detectImageType(bytes)).not.toBeNull();
    expect(isPlausibleImage(bytes)).toBe(false);
  });
});

describe('readImage', () => {
  const chunksOf = (bytes: Buffer, size: number) =>
    Readable.from(
      Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)),
    );

  it('returns the bytes and their type, also when the header arrives in pieces', async () => {
    const png = fixture('mars.png');
    const image = await readImage(chunksOf(png, 3), 1024);
    expect(image.contentType).toBe('image/png');
    expect(image.data.equals(png)).toBe(true);
  });

  it('stops reading as soon as the upload passes the limit, without waiting for its end', async () => {
    let produced = 0;
    // An upload that never ends: only a reader that checks while reading can answer.
    const endless = Readable.from(
      (function* () {
        yield fixture('mars.png').subarray(0, 33);
        for (;;) {
          produced += 1024;
          yield Buffer.alloc(1024);
        }
      })(),
    );
    await expect(readImage(endless, 64 * 1024)).rejects.toBeInstanceOf(ImageTooLargeError);
    expect(produced).toBeLessThanOrEqual(80 * 1024);
    expect(endless.destroyed).toBe(true);
  });

  it('stops at the first bytes when they are not an image', async () => {
    let produced = 0;
    const endless = Readable.from(
      (function* () {
        for (;;) {
          produced += 16;
          yield Buffer.from('plain text here.');
        }
      })(),
    );
    await expect(readImage(endless, 1024 * 1024)).rejects.toBeInstanceOf(NotAnImageError);
    expect(produced).toBeLessThanOrEqual(32);
  });

  it('refuses a file whose start is an image header but which is too short to be one', async () => {
    await expect(readImage(Readable.from([Buffer.from([0xff, 0xd8, 0xff])]), 1024)).rejects.toBeInstanceOf(
      NotAnImageError,
    );
    await expect(readImage(chunksOf(fixture('jupiter.jpg').subarray(0, 40), 7), 1024)).rejects.toBeInstanceOf(
      NotAnImageError,
    );
  });

  it("leaves the stream's own errors (a body that ended early) to the caller, and destroys the stream", async () => {
    const failure = new Error('Part terminated early due to unexpected end of multipart data');
    const failing = new Readable({
      read() {
        this.destroy(failure);
      },
    });
    await expect(readImage(failing, 10)).rejects.toBe(failure);
    expect(failing.destroyed).toBe(true);
  });

  it('refuses an empty upload', async () => {
    await expect(readImage(Readable.from([]), 10)).rejects.toBeInstanceOf(NotAnImageError);
  });
});
