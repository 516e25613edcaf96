import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

import { isRefusedConnection, poolOf } from './pooled-connections';
import { isTlsVerificationError } from './start-failure';

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
   * Why the database does not answer, worded for a readiness answer (public: a cause, never
   * an address or a driver's message): the cause of the last failed connection attempt when
   * there is a recent one, else that it does not answer.
   */
  whyDown(): string {
    const last = poolOf(this.dataSource)?.lastConnectError;
    if (last && Date.now() - last.at <= RECENT_MS) {
      if (isRefusedConnection(last.error)) return 'the database refuses new connections (too many clients)';
      if (isTlsVerificationError(last.error)) return "the database's TLS certificate fails verification";
      const code = (last.error as { code?: unknown }).code;
      if (code === '28P01' || code === '28000') return "the database refuses the service's credentials";
    }
    return 'the database does not answer';
  }
}
