import { Injectable } from '@nestjs/common';
import { Semaphore } from 'async-mutex';

import { clientKey } from '../common/rate-limit';

/** Password checks one client address may have running at once on one instance; more wait their turn. */
export const CHECKS_PER_ADDRESS = 1;

/**
 * Bounds the bcrypt work of one client address in flight. bcrypt runs on libuv's small thread
 * pool: without a bound, one address sending many sign-ins at once would fill it, and a
 * sign-in from anyone else would queue behind all of them. One at a time, an address keeps at
 * most one core busy, so on a machine of two cores a sign-in from elsewhere still has one.
 * The failed-sign-in limits bound how many may wait here: each takes its hits before its turn.
 */
@Injectable()
export class PasswordCheckSlots {
  private readonly addresses = new Map<string, { slots: Semaphore; users: number }>();

  /** Runs `check` once fewer than CHECKS_PER_ADDRESS checks of this address (an IPv6 /64) are running. */
  async run<T>(clientAddress: string, check: () => Promise<T>): Promise<T> {
    const key = clientKey(clientAddress);
    let entry = this.addresses.get(key);
    if (!entry) this.addresses.set(key, (entry = { slots: new Semaphore(CHECKS_PER_ADDRESS), users: 0 }));
    entry.users++;
    try {
      return await entry.slots.runExclusive(check);
    } finally {
      if (--entry.users === 0) this.addresses.delete(key);
    }
  }
}
