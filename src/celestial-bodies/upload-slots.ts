import { Injectable } from '@nestjs/common';
import { E_ALREADY_LOCKED, Semaphore, tryAcquire } from 'async-mutex';

import { TooManyUploadsError, UploadsBusyError } from './celestial-bodies.errors';
import { CelestialBodiesSettings } from './celestial-bodies.settings';

/** Uploads one user may have in progress at once, on one instance. */
export const UPLOADS_PER_USER = 2;

/**
 * Two bounds on image uploads, one for each thing they cost.
 *
 * Storing: at most UPLOAD_CONCURRENCY uploads are hashed and written to PostgreSQL at once
 * on an instance. On its way there an image is copied several times (a `bytea` parameter is
 * encoded whole, not streamed), so a burst of writes would grow the process by hundreds of
 * megabytes that it may not give back. A slot is taken only once the whole body has arrived:
 * taken before, it would be held for as long as the client cares to send, and a few slow
 * clients would hold them all. One past the limit is refused at once (503, Retry-After)
 * rather than queued, so nothing waits holding its image.
 *
 * Receiving: a body being read costs its socket and the bytes that came so far (at most
 * 5 MiB). One user may have at most UPLOADS_PER_USER uploads in progress; one more is
 * refused before its body is read (429), so one account cannot hold more than that.
 */
@Injectable()
export class UploadSlots {
  private readonly storing: Semaphore;
  private readonly inProgress = new Map<number, number>();

  constructor(settings: CelestialBodiesSettings) {
    this.storing = new Semaphore(settings.UPLOAD_CONCURRENCY);
  }

  /** Store slots free right now. */
  get available(): number {
    return this.storing.getValue();
  }

  /** Uploads in progress right now (being received or stored), of all users. */
  get uploading(): number {
    let count = 0;
    for (const n of this.inProgress.values()) count += n;
    return count;
  }

  /** Runs one upload of `userId` (receiving and storing), or refuses it past UPLOADS_PER_USER. */
  async forUser<T>(userId: number, upload: () => Promise<T>): Promise<T> {
    const count = this.inProgress.get(userId) ?? 0;
    if (count >= UPLOADS_PER_USER) throw new TooManyUploadsError(UPLOADS_PER_USER);
    this.inProgress.set(userId, count + 1);
    try {
      return await upload();
    } finally {
      const left = (this.inProgress.get(userId) ?? 1) - 1;
      if (left > 0) this.inProgress.set(userId, left);
      else this.inProgress.delete(userId);
    }
  }

  /** Runs `store` in a store slot, or refuses it at once when none is free. */
  async store<T>(store: () => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      [, release] = await tryAcquire(this.storing).acquire();
    } catch (err) {
      throw err === E_ALREADY_LOCKED ? new UploadsBusyError() : err;
    }
    try {
      return await store();
    } finally {
      release();
    }
  }
}
