import { randomBytes } from 'node:crypto';

import { Injectable, OnModuleInit } from '@nestjs/common';
import bcrypt from 'bcrypt';

import { utf8Length } from '../common/validation';
import { PASSWORD_MAX_BYTES } from './password-policy';
import { UsersSettings } from './users.settings';

/**
 * bcrypt through its async API, which runs on libuv's thread pool instead of blocking
 * the event loop for as long as a hash takes (BCRYPT_COST sets how long).
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private dummyHash: Promise<string>;

  constructor(private readonly settings: UsersSettings) {}

  onModuleInit(): void {
    // Compared against when the email is unknown, so that answer takes as long as a wrong
    // password for a real account. Same cost as real hashes, or the timing would differ.
    // Made on the thread pool while the server starts, not waited for: start-up does not
    // take the time of a hash; a comparison arriving before it is ready waits for it.
    this.dummyHash = bcrypt.hash(randomBytes(24).toString('base64'), this.settings.BCRYPT_COST);
  }

  async hash(password: string): Promise<string> {
    if (utf8Length(password) > PASSWORD_MAX_BYTES)
      throw new RangeError(`A password is at most ${PASSWORD_MAX_BYTES} bytes`);
    return bcrypt.hash(password, this.settings.BCRYPT_COST);
  }

  /** False for a missing hash (after spending the same time) and for over-long passwords. */
  async compare(password: string, hash: string | null): Promise<boolean> {
    // bcrypt would compare only the first 72 bytes and so accept a longer "password".
    if (utf8Length(password) > PASSWORD_MAX_BYTES) return false;
    if (hash === null) {
      await bcrypt.compare(password, await this.dummyHash);
      return false;
    }
    return bcrypt.compare(password, hash);
  }
}
