import { Injectable, Logger } from '@nestjs/common';

import { Clock } from '../common/clock';
import { SecurityCounters } from '../common/metrics';
import { AppConfig } from '../config';
import { hashApiKey, isWellFormedApiKey } from './api-key-codec';
import { type ApiKeyRecord, RegionKeysRepository } from './region-keys.repository';
import { RegionKeysService } from './region-keys.service';
import { RegionKeysSettings } from './region-keys.settings';
import type { ChangeOrigin, LeakReportOutcome } from './region-keys.types';

/**
 * Reports of leaked keys (POST /auth/region/api-keys/leaked), from anyone: each active key
 * reported is revoked at once, or flagged when the last-key rule keeps it (see
 * RegionKeysService.settleLeakReports). The answer never tells which keys were real.
 */
@Injectable()
export class LeakedKeysService {
  private readonly logger = new Logger('LeakedKeys');

  constructor(
    private readonly repository: RegionKeysRepository,
    private readonly regionKeys: RegionKeysService,
    private readonly config: AppConfig,
    private readonly settings: RegionKeysSettings,
    private readonly clock: Clock,
    private readonly counters: SecurityCounters,
  ) {}

  /**
   * Settles a report of `keys` (as sent) and resolves to the number received. Keys of the other
   * environment (live or sandbox) and strings that are no key are ignored.
   */
  async report(keys: string[], origin: ChangeOrigin): Promise<number> {
    // No oracle, in time as in content. Every string is hashed, and the well-formed ones looked up
    // in one query, whatever they are; revoking a real key takes transactions that an unknown one
    // does not, so the answer waits for a floor (LEAK_REPORT_MIN_ANSWER_MS) started before any of
    // it: the work ends under the floor, and every report is answered at the same time after it.
    const floor = new Promise((resolve) => setTimeout(resolve, this.settings.LEAK_REPORT_MIN_ANSWER_MS));
    await Promise.all([this.settle(keys, origin), floor]);
    return keys.length;
  }

  /** For operators: the active keys a leak report flagged, of every region; each must be rolled. */
  listFlagged(): Promise<(ApiKeyRecord & { regionId: string })[]> {
    return this.repository.listLeakFlaggedKeys(this.clock.now());
  }

  private async settle(keys: string[], origin: ChangeOrigin): Promise<void> {
    const environment = this.config.API_ENVIRONMENT;
    const hashes = new Set<string>();
    for (const key of keys) {
      const hash = hashApiKey(key);
      if (isWellFormedApiKey(key, environment)) hashes.add(hash);
    }
    const found = await this.repository.findActiveKeysByHashes([...hashes], this.clock.now());
    const byRegion = new Map<string, string[]>();
    for (const { id, regionId } of found) byRegion.set(regionId, [...(byRegion.get(regionId) ?? []), id]);
    // One region at a time, each under its row lock: no transaction ever waits for two locks.
    for (const [regionId, keyIds] of byRegion) {
      for (const outcome of await this.regionKeys.settleLeakReports(regionId, keyIds, origin)) this.tell(outcome);
    }
  }

  private tell({ keyId, regionId, outcome }: LeakReportOutcome): void {
    this.counters.leakedKeyReported(outcome);
    if (outcome === 'flagged')
      this.logger.warn(
        `API key ${keyId} of region ${regionId} was reported as leaked and is not revoked: it is the region's last ` +
          'managing key (the last-key rule). It shows leakReportedAt until the region rolls it.',
      );
  }
}
