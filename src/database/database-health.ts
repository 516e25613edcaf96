import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { isRefusedConnection, poolOf } from './pooled-connections';
import { describeError } from './start-failure';

// A failed connection attempt older than this no longer explains a failing check.
const RECENT_MS = 30_000;

/** Whether the database answers, for the readiness probe, and if not, why. */
@Injectable()
export class DatabaseHealth {
  constructor(private readonly dataSource: DataSource) {}

  /** Resolves once the database has answered a query on a pooled connection; rejects when it cannot. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }

  /**
   * Why the database does not answer, worded for a readiness answer: the cause of the last
   * failed connection attempt when there is a recent one, else that it does not answer.
   */
  whyDown(): string {
    const last = (this.dataSource.isInitialized ? poolOf(this.dataSource) : undefined)?.lastConnectError;
    if (!last || Date.now() - last.at > RECENT_MS) return 'the database does not answer';
    if (isRefusedConnection(last.error)) return 'the database refuses new connections (too many clients)';
    return `the database cannot be reached (${describeError(last.error)})`;
  }
}
