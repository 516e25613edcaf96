import { hostname } from 'node:os';

import * as pg from 'pg';
import type { DataSource } from 'typeorm';

/**
 * node-postgres, as the service gives it to TypeORM (its `driver` option): the same module,
 * with a Pool that waits out a server refusing new connections and Clients that carry the
 * timeouts in each transaction. Nothing here keeps state on a server connection between
 * transactions, so a transaction pooler (PgBouncer in transaction mode, hosted poolers) may
 * hand each transaction to another server connection.
 */

export interface ConnectionTimeouts {
  statementTimeoutMs: number;
  lockTimeoutMs: number;
  /** How long after statementTimeoutMs a query's reply is given up on, by the client. */
  replyMarginMs: number;
}

/** The SQLSTATE, or a pooler's wording, of a server that will not take one more connection. */
export function isRefusedConnection(err: unknown): boolean {
  if (!err || typeof err !== 'object') return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  return (
    code === '53300' ||
    (typeof message === 'string' && /too many (clients|connections)|no more connections allowed/i.test(message))
  );
}

/** `application_name` when none is set: the service, the host and the process, within PostgreSQL's 63 bytes. */
export function defaultApplicationName(): string {
  const host = hostname().replace(/[^\x20-\x7e]/g, '?');
  return `region-keys-api/${host}/${process.pid}`.slice(0, 63);
}

// How long a cancel request may take to reach the server before the connection is closed.
const CANCEL_DELIVERY_MS = 500;

/**
 * A connection that starts every transaction with its own timeouts (SET LOCAL, in the same
 * round trip as START TRANSACTION), rather than as startup parameters, which poolers refuse,
 * or session settings, which a transaction pooler would leave on whichever server connection
 * ran them. A statement outside a transaction has no server-side timeout: when its reply
 * does not come within the statement timeout and the margin, the server is told to cancel it
 * (so no backend is left waiting on a lock) and the connection is closed, as one whose server
 * may have gone silent; the pool opens a fresh one when needed.
 */
function timedClient(timeouts: ConnectionTimeouts): typeof pg.Client {
  const begin =
    `START TRANSACTION; SET LOCAL statement_timeout = ${timeouts.statementTimeoutMs}; ` +
    `SET LOCAL lock_timeout = ${timeouts.lockTimeoutMs}; ` +
    `SET LOCAL idle_in_transaction_session_timeout = ${timeouts.statementTimeoutMs * 2}`;

  return class TimedClient extends pg.Client {
    private readonly settings: pg.ClientConfig;

    constructor(config: pg.ClientConfig) {
      super({ ...config, query_timeout: timeouts.statementTimeoutMs + timeouts.replyMarginMs });
      this.settings = config;
      // The pool hands out a new connection within the read of its first reply; when the
      // same read also brings the server's end of the session (pg_terminate_backend), the
      // error comes before its new holder has listened, and an unheard 'error' would be
      // thrown out of the socket's handler and end the process. The connection is marked
      // unusable either way: its holder's next query fails (503), and the pool drops it.
      this.on('error', () => undefined);
    }

    override query(...args: unknown[]): never {
      // TypeORM opens every transaction with this exact statement, and no parameters.
      if (args[0] === 'START TRANSACTION' && args.length <= 2 && args[1] === undefined) args = [begin];
      const query = (pg.Client.prototype.query as (...a: unknown[]) => unknown).apply(this, args);
      if (!(query instanceof Promise)) return query as never;
      return query.catch(async (err: unknown) => {
        if (err instanceof Error && err.message === 'Query read timeout') await this.abandon();
        throw err;
      }) as never;
    }

    /** Cancels what this connection runs on the server, then closes it. */
    private async abandon(): Promise<void> {
      const self = this as unknown as CancelKey & { _getActiveQuery(): unknown };
      if (self._getActiveQuery()) await sendCancel(new pg.Client(this.settings), self);
      // Not awaited: a silent server never acknowledges the close.
      this.end().catch(() => undefined);
    }
  };
}

interface CancelKey {
  processID: number;
  secretKey: number;
}

interface RawConnection extends NodeJS.EventEmitter {
  connect(port: number | string, host?: string): void;
  cancel(processID: number, secretKey: number): void;
  requestSsl(): void;
  end(): void;
}

/**
 * Sends PostgreSQL's cancel request for the backend (or pooler client) `key`, on a connection
 * of its own opened with `canceller`'s address, and waits until it was delivered (the peer
 * closes that connection) or for at most CANCEL_DELIVERY_MS. What node-postgres offers for
 * this (Client#cancel) reads a property it has deprecated, which prints a warning.
 */
async function sendCancel(canceller: pg.Client, key: CancelKey): Promise<void> {
  const { connection, host, port, ssl } = canceller as unknown as {
    connection: RawConnection;
    host: string;
    port: number;
    ssl: unknown;
  };
  const delivered = new Promise<void>((resolve) => {
    connection.once('end', resolve);
    connection.on('error', () => resolve());
    setTimeout(resolve, CANCEL_DELIVERY_MS).unref();
  });
  // Over TLS when the connections are: a server or pooler that takes only TLS refuses a
  // plain one, and would never see the cancel.
  const cancel = () => connection.cancel(key.processID, key.secretKey);
  connection.once('connect', () => (ssl ? connection.requestSsl() : cancel()));
  connection.once('sslconnect', cancel);
  connection.connect(host.startsWith('/') ? `${host}/.s.PGSQL.${port}` : port, host.startsWith('/') ? undefined : host);
  await delivered;
  connection.end();
}

/** Connection attempts that failed, for the metrics: refused (the server is full) and others. */
export interface ConnectFailures {
  refused: number;
  failed: number;
}

type ConnectCallback = (
  err: Error | undefined,
  client: pg.PoolClient | undefined,
  release: pg.PoolClient['release'],
) => void;

/**
 * A pool whose request for a connection, when the server refuses a new one (its
 * max_connections spent by other clients, or a pooler's limit), waits for one of this pool's
 * connections to come free, up to connectionTimeoutMillis, instead of failing at once.
 */
export class WaitingPool extends pg.Pool {
  readonly connectFailures: ConnectFailures = { refused: 0, failed: 0 };
  /** The last failed attempt's error, for readiness to name the cause. */
  lastConnectError?: { error: unknown; at: number };

  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | void {
    const acquiring = this.acquire();
    if (!callback) return acquiring;
    acquiring.then(
      // This checkout's own release, as the pool hands it out (a later checkout gets another).
      (client) => callback(undefined, client, client.release.bind(client)),
      (err: Error) => callback(err, undefined, () => undefined),
    );
  }

  private async acquire(): Promise<pg.PoolClient> {
    const deadline = Date.now() + (this.options.connectionTimeoutMillis ?? 0);
    for (let attempt = 0; ; attempt++) {
      try {
        return await super.connect();
      } catch (err) {
        const refused = isRefusedConnection(err);
        this.connectFailures[refused ? 'refused' : 'failed'] += 1;
        this.lastConnectError = { error: err, at: Date.now() };
        const left = deadline - Date.now();
        if (!refused || left <= 0) throw err;
        await new Promise((resolve) => setTimeout(resolve, Math.min(left, 20 * 2 ** Math.min(attempt, 4))));
      }
    }
  }
}

/** The module TypeORM loads as its PostgreSQL driver. */
export function pooledDriver(timeouts: ConnectionTimeouts): typeof pg {
  const Client = timedClient(timeouts);
  class Pool extends WaitingPool {
    constructor(options: pg.PoolConfig) {
      super({ ...options, Client });
    }
  }
  return Object.create(pg, { Pool: { value: Pool }, Client: { value: Client } }) as typeof pg;
}

/** The pool behind TypeORM's DataSource, once initialized (the embedded database has one too, of one session). */
export function poolOf(dataSource: DataSource): WaitingPool | undefined {
  if (!dataSource.isInitialized) return undefined;
  return (dataSource.driver as unknown as { master?: WaitingPool }).master ?? undefined;
}
