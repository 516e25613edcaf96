import { Injectable } from '@nestjs/common';

import { Clock } from '../../common/clock';
import { NotFoundError } from '../../common/problem';
import { KeyUsageRepository } from './key-usage.repository';
import type { DailyUsage } from './key-usage.types';
import { KeyUsageCounter } from './key-usage-counter';
import { utcDaysEndingWith } from './utc-day';

/** Revoked keys are found too: their usage is what shows that nothing still used them. */
export class UsageKeyNotFoundError extends NotFoundError {
  constructor() {
    super('No API key with this id exists in your region.');
  }
}

@Injectable()
export class KeyUsageService {
  constructor(
    private readonly repository: KeyUsageRepository,
    private readonly counter: KeyUsageCounter,
    private readonly clock: Clock,
  ) {}

  /**
   * A key's requests on each of the last `days` UTC days (today included), oldest first,
   * every day listed: what all instances have written, plus what this instance has counted
   * and not yet written. Other instances' latest counts show after their next flush.
   */
  async dailyUsage(regionId: string, apiKeyId: string, days: number): Promise<DailyUsage[]> {
    if (!(await this.repository.keyExistsInRegion(apiKeyId, regionId))) throw new UsageKeyNotFoundError();
    const window = utcDaysEndingWith(this.clock.now(), days);
    const stored = await this.repository.listDaily(apiKeyId, window[0], window[window.length - 1]);
    const pending = this.counter.pendingFor(apiKeyId);
    return window.map((date) => ({ date, requests: (stored.get(date) ?? 0) + (pending.get(date) ?? 0) }));
  }
}
