import { Injectable, OnModuleInit } from '@nestjs/common';

import { Clock } from '../common/clock';
import { ScrapedGauges } from '../common/metrics';
import { RegionKeysRepository } from './region-keys.repository';

const WEEK_MS = 7 * 86_400_000;

/**
 * The key_expiring signal for operators: how many active keys, of all regions, stop by their
 * expiresAt within the next 7 days. One count on a partial index at each scrape; no label
 * per region (their number has no bound). A rise tells an operator that clients are about
 * to lose keys; the region's own holders see each key's expiresAt in GET /auth/regions/me.
 */
@Injectable()
export class KeyExpiryMetric implements OnModuleInit {
  constructor(
    private readonly gauges: ScrapedGauges,
    private readonly repository: RegionKeysRepository,
    private readonly clock: Clock,
  ) {}

  onModuleInit(): void {
    this.gauges.register(
      'api_keys_expiring',
      'Active region API keys whose expiresAt falls within the next 7 days (key_expiring).',
      () => {
        const now = this.clock.now();
        return this.repository.countKeysExpiringBefore(now, new Date(now.getTime() + WEEK_MS));
      },
    );
  }
}
