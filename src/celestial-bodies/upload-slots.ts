import { Injectable } from '@nestjs/common';
import { E_ALREADY_LOCKED, Semaphore, tryAcquire } from 'async-mutex';
import { AppConfig } from '../config/app-config';
import { UploadsBusyError } from './celestial-bodies.errors';

/**
 * At most UPLOAD_CONCURRENCY image uploads are read and stored at once on an instance. An
 * upload holds up to 5 MiB, and several times that on its way to PostgreSQL (the chunks,
 * the joined buffer, the encoded parameter), so a burst of uploads would grow the process
 * by hundreds of megabytes that it may not give back. One past the limit is refused at
 * once (503, Retry-After) rather than queued, so nothing waits holding its socket.
 */
@Injectable()
export class UploadSlots {
  private readonly slots: Semaphore;

  constructor(config: AppConfig) {
    this.slots = new Semaphore(config.UPLOAD_CONCURRENCY);
  }

  /** Slots free right now. */
  get available(): number {
    return this.slots.getValue();
  }

  async run<T>(upload: () => Promise<T>): Promise<T> {
    let release: () => void;
    try {
      [, release] = await tryAcquire(this.slots).acquire();
    } catch (err) {
      throw err === E_ALREADY_LOCKED ? new UploadsBusyError() : err;
    }
    try {
      return await upload();
    } finally {
      release();
    }
  }
}
