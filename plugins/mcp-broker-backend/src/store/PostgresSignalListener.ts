/*
 * A replica's one listening connection for the signals between replicas (PostgreSQL
 * `LISTEN/NOTIFY`; see src/replicas/SignalBus.ts and DatabaseSignalStore.ts, which notifies in
 * the statement that inserts). The connection is made by the plugin's knex client from its own
 * config but outside its pool (`acquireRawConnection`, as Backstage's events backend does for
 * its `LISTEN`): it is held for as long as the bus listens, so taking it from the pool would
 * leave the requests one connection fewer; docs/deployment.md counts it.
 *
 * Failure modes: a connection that ends, errs, or does not answer its keep-alive query within
 * {@link KEEPALIVE_TIMEOUT_MS} is dropped and the listener told `lost` (the bus polls
 * meanwhile); a new one is made after an exponential backoff (0.5 s doubling to 30 s, jittered)
 * until `close`. Each time `LISTEN` succeeds the listener is told `listening`, and the bus reads
 * whatever was sent while nobody listened. Unlike the events backend, which fails its waiters
 * and lets them listen again, this one reconnects itself: its waiters lose nothing but speed.
 */
import type { Knex } from 'knex';
import { ExponentialBackoff } from '../backend/ExponentialBackoff';
import type { SignalListener, SignalSubscription } from '../replicas/SignalBus';

/** How often the idle listening connection is checked with a query. */
export const KEEPALIVE_INTERVAL_MS = 30_000;

/** A keep-alive query not answered within this is a dead connection. */
export const KEEPALIVE_TIMEOUT_MS = 10_000;

/** The first delay before a new connection is tried; it doubles up to the next one. */
const RECONNECT_INITIAL_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/** The part of a `pg` client used here. */
interface PgNotification {
  channel: string;
  payload?: string;
}
interface PgConnection {
  query(sql: string): Promise<unknown>;
  on(event: 'notification', handler: (message: PgNotification) => void): unknown;
  on(event: 'error' | 'end', handler: (error?: unknown) => void): unknown;
}

/** Options of {@link PostgresSignalListener}. */
export interface PostgresSignalListenerOptions {
  /** The plugin's knex client on PostgreSQL (its config makes the connection). */
  knex: Knex;
  /** The notification channel (an SQL identifier: letters, digits and `_`). */
  channel: string;
  listener: SignalListener;
  /** For tests; defaults above. */
  reconnectInitialMs?: number;
  keepaliveIntervalMs?: number;
}

/** See the file comment. Starts connecting when constructed. */
export class PostgresSignalListener implements SignalSubscription {
  private connection: PgConnection | undefined;
  private readonly backoff: ExponentialBackoff;
  private retryTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;

  constructor(private readonly options: PostgresSignalListenerOptions) {
    if (!/^[a-z_][a-z0-9_]*$/.test(options.channel)) {
      throw new Error(`Invalid notification channel "${options.channel}"`);
    }
    this.backoff = new ExponentialBackoff(
      options.reconnectInitialMs ?? RECONNECT_INITIAL_MS,
      RECONNECT_MAX_MS,
    );
    this.connecting = this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.connecting;
    await this.drop(this.connection);
  }

  private async connect(): Promise<void> {
    let connection: PgConnection | undefined;
    try {
      connection = (await this.options.knex.client.acquireRawConnection()) as PgConnection;
      if (this.closed) {
        void this.destroy(connection);
        return;
      }
      const current = connection;
      current.on('notification', message => {
        if (message.channel === this.options.channel && message.payload !== undefined) {
          this.options.listener.signalSent(message.payload);
        }
      });
      current.on('error', error => this.lost(current, error));
      current.on('end', () => this.lost(current, new Error('the listening connection ended')));
      await current.query(`LISTEN ${this.options.channel}`);
      if (this.closed) {
        void this.destroy(current);
        return;
      }
      this.connection = current;
      this.backoff.reset();
      this.keepAlive(current);
      this.options.listener.listening();
    } catch (error) {
      if (connection !== undefined) void this.destroy(connection);
      this.options.listener.lost(error);
      this.retry();
    } finally {
      this.connecting = undefined;
    }
  }

  /** The connection in use failed: drop it, tell the listener, connect again later. */
  private lost(connection: PgConnection, error: unknown): void {
    if (connection !== this.connection) return; // not in use (yet, or any more)
    void this.drop(connection);
    if (this.closed) return;
    this.options.listener.lost(error);
    this.retry();
  }

  private retry(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.connecting = this.connect();
    }, this.backoff.nextDelayMs());
    this.retryTimer.unref();
  }

  private keepAlive(connection: PgConnection): void {
    const intervalMs = this.options.keepaliveIntervalMs ?? KEEPALIVE_INTERVAL_MS;
    this.keepaliveTimer = setInterval(() => {
      let timeout: NodeJS.Timeout | undefined;
      const unanswered = new Promise<never>((_, reject) => {
        timeout = setTimeout(
          () => reject(new Error('the listening connection did not answer its keep-alive')),
          KEEPALIVE_TIMEOUT_MS,
        );
        timeout.unref();
      });
      Promise.race([connection.query('SELECT 1'), unanswered])
        .catch(error => this.lost(connection, error))
        .finally(() => clearTimeout(timeout));
    }, intervalMs);
    this.keepaliveTimer.unref();
  }

  private drop(connection: PgConnection | undefined): Promise<void> {
    if (connection === undefined) return Promise.resolve();
    if (connection === this.connection) {
      this.connection = undefined;
      clearInterval(this.keepaliveTimer);
      this.keepaliveTimer = undefined;
    }
    return this.destroy(connection);
  }

  /** Ends a connection; never fails (knex's own handler keeps its late errors quiet). */
  private destroy(connection: PgConnection): Promise<void> {
    return this.options.knex.client.destroyRawConnection(connection).catch(() => undefined);
  }
}
