import { Injectable } from '@nestjs/common';

import { ShutdownState } from '../common/lifecycle';
import { RateLimitStore } from '../common/rate-limit';
import { DatabaseHealth } from '../database';

/** A probe answers within this, whatever a silent dependency does (orchestrators time probes out). */
export const READINESS_CHECK_TIMEOUT_MS = 2000;

export interface Readiness {
  shuttingDown: boolean;
  /** null when the database answers, else why not (DatabaseHealth.whyDown). */
  databaseDown: string | null;
  /** For information only: without Redis each instance counts the rate limits on its own. */
  redis: 'up' | 'degraded' | 'not configured';
}

const REDIS_STATE = { redis: 'up', 'redis-away': 'degraded', memory: 'not configured' } as const;

@Injectable()
export class HealthService {
  constructor(
    private readonly database: DatabaseHealth,
    private readonly counters: RateLimitStore,
    private readonly shutdown: ShutdownState,
  ) {}

  async readiness(): Promise<Readiness> {
    const database = await withinTimeout(this.database.ping().then(() => true));
    return {
      shuttingDown: this.shutdown.isShuttingDown,
      databaseDown: database ? null : this.database.whyDown(),
      redis: REDIS_STATE[this.counters.counting],
    };
  }
}

/** true when the check succeeds in time; false when it fails or is late. */
async function withinTimeout(check: Promise<boolean>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), READINESS_CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([check.catch(() => false), late]);
  } finally {
    clearTimeout(timer);
  }
}
