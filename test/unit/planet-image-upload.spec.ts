import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { PayloadTooLargeException } from '@nestjs/common';
import { ImageTooLargeError, NotAnImageError } from '../../src/celestial-bodies/celestial-bodies.errors';
import { detectImageType, readImage } from '../../src/celestial-bodies/image-upload';

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
  ])('refuses %s', (_, bytes) => {
    expect(detectImageType(bytes)).toBeNull();
  });
});

describe('readImage', () => {
  const chunksOf = (bytes: Buffer, size: number) => Readable.from(Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size)));

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
        yield Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0]);
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

  it('reports the multipart parser\'s own size limit as the same 413', async () => {
    const failing = new Readable({ read() { this.destroy(new PayloadTooLargeException('File too large')); } });
    await expect(readImage(failing, 10)).rejects.toBeInstanceOf(ImageTooLargeError);
  });

  it('refuses an empty upload', async () => {
    await expect(readImage(Readable.from([]), 10)).rejects.toBeInstanceOf(NotAnImageError);
  });
});
