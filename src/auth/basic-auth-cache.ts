import { createHmac, createSecretKey, randomBytes } from 'node:crypto';

import { Injectable } from '@nestjs/common';
import { coalesceAsync } from 'promise-coalesce';

import { AuthSettings } from './auth.settings';

interface Entry {
  userId: number;
  /** The hash the password was checked against: a changed hash voids the entry. */
  passwordHash: string;
  expiresAt: number;
}

/**
 * Remembers, for a few minutes, that an email and password were right, so that a client
 * sending Basic credentials on every request does not cost a bcrypt comparison each time
 * (as Apache's mod_authn_socache does). Only successes are kept; a miss always goes to
 * bcrypt. Keys are an HMAC under a key that lives only in this process, so neither the
 * password nor anything that could be brute-forced offline is held in memory. Bounded:
 * least recently used entries go first.
 */
@Injectable()
export class BasicAuthCache {
  // A key object: createHmac given a Buffer checks and converts it on every call, which
  // costs more than the HMAC itself.
  private readonly hmacKey = createSecretKey(randomBytes(32));
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(settings: AuthSettings) {
    this.ttlMs = settings.BASIC_AUTH_CACHE_TTL_SECONDS * 1000;
    this.maxEntries = settings.BASIC_AUTH_CACHE_MAX_ENTRIES;
  }

  keyOf(email: string, password: string): string {
    return createHmac('sha256', this.hmacKey)
      .update(JSON.stringify([email, password]))
      .digest('base64');
  }

  /** True when these credentials were verified recently against exactly this user and hash. */
  isVerified(key: string, userId: number, passwordHash: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now() || entry.userId !== userId || entry.passwordHash !== passwordHash) return false;
    this.entries.set(key, entry); // most recently used goes last
    return true;
  }

  /**
   * Runs `check` (a sign-in attempt: a slot of the failed-login allowance and a bcrypt
   * comparison) once for any number of simultaneous checks of the same credentials, from
   * the same client, against the same stored hash: a client that opens many connections at
   * once with credentials not yet remembered costs one comparison and one slot, not one per
   * request, and every request waits for that one. A different password, client or hash is
   * another key, so no result is ever handed to a check it was not computed for.
   */
  checkOnce<T>(key: string, clientAddress: string, passwordHash: string | null, check: () => Promise<T>): Promise<T> {
    return coalesceAsync(`${key}\n${clientAddress}\n${passwordHash ?? ''}`, check);
  }

  remember(key: string, userId: number, passwordHash: string): void {
    if (this.ttlMs === 0) return;
    this.entries.delete(key);
    this.entries.set(key, { userId, passwordHash, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) {
      this.entries.delete(this.entries.keys().next().value as string);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  protected now(): number {
    return Date.now();
  }
}
