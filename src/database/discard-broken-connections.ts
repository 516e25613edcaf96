import type { Client } from 'pg';
import { type EntitySubscriberInterface, EventSubscriber } from 'typeorm';
import type { PostgresQueryRunner } from 'typeorm/driver/postgres/PostgresQueryRunner';
import type { AfterQueryEvent } from 'typeorm/subscriber/event/QueryEvent';

/**
 * A query that got no answer within query_timeout leaves its connection waiting for that
 * answer forever: node-postgres rejects the query but keeps the connection, TypeORM gives
 * it back to the pool as healthy, and every later query on it queues behind the lost one.
 * Such a connection is closed instead: node-postgres drops its socket at once (a query is
 * still waiting), and the pool discards a closed client when it is released and opens a
 * fresh one when needed. The transaction's ROLLBACK then fails at once instead of waiting
 * out a second timeout; the server rolls back when it sees the connection close, or after
 * idle_in_transaction_session_timeout.
 */
@EventSubscriber()
export class DiscardBrokenConnections implements EntitySubscriberInterface {
  // TypeORM waits for the returned promise before it throws the query's error, so the
  // connection is closed before anything (the ROLLBACK) could queue on it.
  async afterQuery(event: AfterQueryEvent): Promise<void> {
    if (event.success || !(event.error instanceof Error) || event.error.message !== 'Query read timeout') return;
    try {
      // The runner is connected (it just ran the query): connect() hands back its client.
      const client = (await (event.queryRunner as PostgresQueryRunner).connect()) as Client;
      await client.end();
    } catch {
      // Closing a broken connection may fail too; the pool discards it all the same.
    }
  }
}
