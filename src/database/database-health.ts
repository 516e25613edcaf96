import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** Whether the database answers, for the readiness probe. */
@Injectable()
export class DatabaseHealth {
  constructor(private readonly dataSource: DataSource) {}

  /** Resolves once the database has answered a query on a pooled connection; rejects when it cannot. */
  async ping(): Promise<void> {
    await this.dataSource.query('SELECT 1');
  }
}
