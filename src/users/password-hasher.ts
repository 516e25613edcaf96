import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';

import { Injectable, OnModuleInit } from '@nestjs/common';
import bcrypt from 'bcrypt';

import { utf8Length } from '../common/validation';
import { PASSWORD_MAX_BYTES } from './password-policy';
import { UsersSettings } from './users.settings';

/** The cost a bcrypt hash was made with; null for anything else (an account nobody signs in as). */
const costOf = (hash: string): number | null => (/^\$2[aby]\$\d\d\$/.test(hash) ? bcrypt.getRounds(hash) : null);

/**
 * bcrypt through its async API, which runs on libuv's thread pool instead of blocking
 * the event loop for as long as a hash takes (BCRYPT_COST sets how long).
 *
 * A failed check takes as long whoever the email belongs to. An unknown email is compared
 * against a dummy hash at the current cost, but a stored hash keeps the cost it was made
 * with until its owner signs in again: after BCRYPT_COST changes, a wrong password for an
 * older account would answer sooner (raised cost) or later (lowered cost) than an unknown
 * email. So every failure lasts at least as long as one comparison at the current cost,
 * timed at start on this machine, the rest waited on a timer (no CPU); and a failure
 * against a hash of a higher cost than the current one raises that floor to its own time.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private dummyHash: Promise<string>;
  private failureFloorMs: Promise<number>;
  // Costs above the current one, met in failed checks, with how long such a check took.
  private readonly higherCosts = new Map<number, number>();

  constructor(private readonly settings: UsersSettings) {}

  onModuleInit(): void {
    // Made and timed on the thread pool while the server starts, not waited for: start-up
    // does not take the time of a hash; a check arriving before they are ready waits for them.
    this.dummyHash = bcrypt.hash(randomBytes(24).toString('base64'), this.settings.BCRYPT_COST);
    this.failureFloorMs = this.dummyHash.then(async (hash) => {
      const started = this.now();
      await bcrypt.compare('', hash);
      return this.now() - started;
    });
  }

  async hash(password: string): Promise<string> {
    if (utf8Length(password) > PASSWORD_MAX_BYTES)
      throw new RangeError(`A password is at most ${PASSWORD_MAX_BYTES} bytes`);
    return bcrypt.hash(password, this.settings.BCRYPT_COST);
  }

  /** True for a hash made at another cost than BCRYPT_COST: hash the password again once it is known right. */
  needsRehash(hash: string): boolean {
    const cost = costOf(hash);
    return cost !== null && cost !== this.settings.BCRYPT_COST;
  }

  /** False for a missing hash (unknown email) and for over-long passwords; a false takes the failure floor at least. */
  async compare(password: string, hash: string | null): Promise<boolean> {
    const started = this.now();
    const matches = await this.check(password, hash);
    if (!matches) await this.padFailure(this.now() - started, hash === null ? null : costOf(hash));
    return matches;
  }

  /** Waits on a timer; a test may replace it to see what is asked for. */
  protected wait(ms: number): Promise<void> {
    return sleep(ms);
  }

  protected now(): number {
    return performance.now();
  }

  private async check(password: string, hash: string | null): Promise<boolean> {
    // bcrypt would compare only the first 72 bytes and so accept a longer "password".
    if (utf8Length(password) > PASSWORD_MAX_BYTES) return false;
    return bcrypt.compare(password, hash ?? (await this.dummyHash));
  }

  private async padFailure(tookMs: number, cost: number | null): Promise<void> {
    if (cost !== null && cost > this.settings.BCRYPT_COST && !this.higherCosts.has(cost))
      this.higherCosts.set(cost, tookMs);
    const floorMs = Math.max(await this.failureFloorMs, ...this.higherCosts.values());
    if (floorMs > tookMs) await this.wait(floorMs - tookMs);
  }
}
