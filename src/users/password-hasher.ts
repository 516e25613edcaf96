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

// How many of the latest checks at the current cost the floor is the median of.
const RECENT_CHECKS = 15;

/**
 * bcrypt through its async API, which runs on libuv's thread pool instead of blocking
 * the event loop for as long as a hash takes (BCRYPT_COST sets how long).
 *
 * A failed check takes as long whoever the email belongs to. An unknown email is compared
 * against a dummy hash at the current cost, but a stored hash keeps the cost it was made
 * with until its owner signs in again: after BCRYPT_COST changes, a wrong password for an
 * older account would answer sooner (raised cost) or later (lowered cost) than an unknown
 * email. So every failure lasts at least as long as a comparison at the current cost takes
 * on this machine now, the rest waited on a timer (no CPU): the median of the latest ones,
 * the first timed at start (and a start is busy, so later ones soon replace them). A failure
 * against a hash of a higher cost than the current one raises that floor to its own time.
 */
@Injectable()
export class PasswordHasher implements OnModuleInit {
  private dummyHash: Promise<string>;
  private timedAtStart: Promise<void>;
  private readonly recentMs: number[] = [];
  // Costs above the current one, met in failed checks, with how long such a check took.
  private readonly higherCosts = new Map<number, number>();

  constructor(private readonly settings: UsersSettings) {}

  onModuleInit(): void {
    // Made and timed on the thread pool while the server starts, not waited for: start-up
    // does not take the time of a hash; a check arriving before they are ready waits for them.
    this.dummyHash = bcrypt.hash(randomBytes(24).toString('base64'), this.settings.BCRYPT_COST);
    this.timedAtStart = this.dummyHash.then(async (hash) => {
      for (let i = 0; i < 3; i++) {
        const started = this.now();
        await bcrypt.compare('', hash);
        this.recordCheck(this.now() - started);
      }
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
    const cost = hash === null ? this.settings.BCRYPT_COST : costOf(hash);
    // bcrypt would compare only the first 72 bytes and so accept a longer "password".
    const matches = utf8Length(password) <= PASSWORD_MAX_BYTES && (await this.check(password, hash, cost));
    if (!matches) await this.padFailure(this.now() - started, cost);
    return matches;
  }

  /** Waits on a timer; a test may replace it to see what is asked for. */
  protected wait(ms: number): Promise<void> {
    return sleep(ms);
  }

  protected now(): number {
    return performance.now();
  }

  private async check(password: string, hash: string | null, cost: number | null): Promise<boolean> {
    const against = hash ?? (await this.dummyHash);
    const started = this.now();
    const matches = await bcrypt.compare(password, against);
    if (cost === this.settings.BCRYPT_COST) this.recordCheck(this.now() - started);
    return matches;
  }

  private async padFailure(tookMs: number, cost: number | null): Promise<void> {
    if (cost !== null && cost > this.settings.BCRYPT_COST && !this.higherCosts.has(cost))
      this.higherCosts.set(cost, tookMs);
    await this.timedAtStart;
    const floorMs = Math.max(this.floorMs(), ...this.higherCosts.values());
    if (floorMs > tookMs) await this.wait(floorMs - tookMs);
  }

  /** The median of the latest checks at the current cost. */
  private floorMs(): number {
    const sorted = [...this.recentMs].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  }

  private recordCheck(ms: number): void {
    this.recentMs.push(ms);
    if (this.recentMs.length > RECENT_CHECKS) this.recentMs.shift();
  }
}
