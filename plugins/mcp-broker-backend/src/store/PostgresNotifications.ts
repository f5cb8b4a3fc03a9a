/*
 * A replica's one listening connection to PostgreSQL (`LISTEN/NOTIFY`), shared by everything in
 * the replica that wants to be woken by another replica's commit: the signal bus
 * (src/replicas/SignalBus.ts, channel `mcp_broker_signals`) and the access grant index
 * (src/grants/GrantIndex.ts, channel `mcp_broker_access_grants`). One connection with one
 * `LISTEN` per channel rather than one connection per user: a held connection is one fewer for
 * the server's `max_connections`, and docs/deployment.md counts exactly one per replica
 * (packages/backend/src/database/pluginOwnPools.ts checks that budget at start-up).
 *
 * The connection is made by the plugin's knex client from its own config but outside its pool
 * (`acquireRawConnection`, as Backstage's events backend does for its `LISTEN`): taking a pool
 * connection for hours would leave the requests one fewer. It is opened by the first
 * subscription and ended when the last one closes, so whoever subscribes owns a share of it.
 *
 * Failure modes: a connection that ends, errs, or does not answer its keep-alive query within
 * {@link KEEPALIVE_TIMEOUT_MS} is dropped and every subscriber told `lost` (each falls back to
 * polling); a new one is made after an exponential backoff (0.5 s doubling to 30 s, jittered)
 * while anyone subscribes, and each subscriber is told `listening` once its channel is listened
 * to again (it then reads whatever was committed while nobody listened). A failed `LISTEN` for a
 * channel added later counts as a lost connection. Notifications carry no secret (an address, a
 * revision), and none is logged here.
 */
import type { Knex } from 'knex';
import { ExponentialBackoff } from '../backend/ExponentialBackoff';
import { isPostgres } from './isPostgres';

/** How often the idle listening connection is checked with a query. */
export const KEEPALIVE_INTERVAL_MS = 30_000;

/** A keep-alive query not answered within this is a dead connection. */
export const KEEPALIVE_TIMEOUT_MS = 10_000;

/** The first delay before a new connection is tried; it doubles up to the next one. */
const RECONNECT_INITIAL_MS = 500;
const RECONNECT_MAX_MS = 30_000;

/** What a subscriber of one channel is told. */
export interface NotificationListener {
  /** A notification on the channel was committed (its payload). */
  notified(payload: string): void;
  /** From now on every notification on the channel reaches `notified` (again after each reconnect). */
  listening(): void;
  /** Notifications stopped (`error` says why) until the next `listening`. */
  lost(error: unknown): void;
}

/** One subscriber's share of the listening connection. */
export interface NotificationSubscription {
  /** Stops telling this subscriber; the last one to close ends the connection. */
  close(): Promise<void>;
}

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

/** Options of {@link PostgresNotifications}. */
export interface PostgresNotificationsOptions {
  /** The plugin's knex client on PostgreSQL (its config makes the connection). */
  knex: Knex;
  /** For tests; defaults above. */
  reconnectInitialMs?: number;
  keepaliveIntervalMs?: number;
}

/** See the file comment. */
export class PostgresNotifications {
  private readonly subscribers = new Map<string, Set<NotificationListener>>();
  private connection: PgConnection | undefined;
  /** The channels `connection` listens to. */
  private listened = new Set<string>();
  private readonly backoff: ExponentialBackoff;
  private retryTimer: NodeJS.Timeout | undefined;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private connecting: Promise<void> | undefined;

  /**
   * The replica's listening connection: on PostgreSQL unless `enabled` is false
   * (`mcpBroker.signalNotifications`); undefined otherwise (everything then polls).
   */
  static forReplica(knex: Knex, enabled: boolean): PostgresNotifications | undefined {
    return enabled && isPostgres(knex) ? new PostgresNotifications({ knex }) : undefined;
  }

  constructor(private readonly options: PostgresNotificationsOptions) {
    this.backoff = new ExponentialBackoff(
      options.reconnectInitialMs ?? RECONNECT_INITIAL_MS,
      RECONNECT_MAX_MS,
    );
  }

  /**
   * Tells `listener` of the notifications on `channel` (an SQL identifier: lower-case letters,
   * digits and `_`) until the subscription is closed; connects when nothing listened yet.
   */
  subscribe(channel: string, listener: NotificationListener): NotificationSubscription {
    if (!/^[a-z_][a-z0-9_]*$/.test(channel)) {
      throw new Error(`Invalid notification channel "${channel}"`);
    }
    const listeners = this.subscribers.get(channel) ?? new Set();
    listeners.add(listener);
    this.subscribers.set(channel, listeners);
    if (this.connection !== undefined) {
      void this.addChannel(this.connection, channel, listener);
    } else if (this.connecting === undefined && this.retryTimer === undefined) {
      this.connecting = this.connect();
    } // else: the connection under way (or due after a backoff) listens to it and tells it.
    return { close: () => this.unsubscribe(channel, listener) };
  }

  private async unsubscribe(channel: string, listener: NotificationListener): Promise<void> {
    const listeners = this.subscribers.get(channel);
    listeners?.delete(listener);
    if (listeners?.size === 0) this.subscribers.delete(channel);
    if (this.subscribers.size > 0) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.connecting;
    if (this.subscribers.size > 0) return; // someone subscribed meanwhile
    await this.drop(this.connection);
  }

  private async connect(): Promise<void> {
    let connection: PgConnection | undefined;
    try {
      connection = (await this.options.knex.client.acquireRawConnection()) as PgConnection;
      const current = connection;
      current.on('notification', message => {
        if (current !== this.connection || message.payload === undefined) return;
        for (const listener of this.subscribers.get(message.channel) ?? []) {
          listener.notified(message.payload);
        }
      });
      current.on('error', error => this.lost(current, error));
      current.on('end', () => this.lost(current, new Error('the listening connection ended')));
      // Every channel subscribed, also those subscribed while the LISTENs ran.
      const listened = new Set<string>();
      for (;;) {
        const missing = [...this.subscribers.keys()].filter(channel => !listened.has(channel));
        if (missing.length === 0) break;
        for (const channel of missing) {
          await current.query(`LISTEN ${channel}`);
          listened.add(channel);
        }
      }
      if (this.subscribers.size === 0) {
        void this.destroy(current); // everyone left meanwhile
        return;
      }
      this.connection = current;
      this.listened = listened;
      this.backoff.reset();
      this.keepAlive(current);
      for (const listeners of this.subscribers.values()) {
        for (const listener of listeners) listener.listening();
      }
    } catch (error) {
      if (connection !== undefined) void this.destroy(connection);
      this.tellLost(error);
      this.retry();
    } finally {
      this.connecting = undefined;
    }
  }

  /** A channel subscribed while the connection is up: LISTEN to it, then tell its subscriber. */
  private async addChannel(
    connection: PgConnection,
    channel: string,
    listener: NotificationListener,
  ): Promise<void> {
    try {
      if (!this.listened.has(channel)) {
        await connection.query(`LISTEN ${channel}`);
        if (connection === this.connection) this.listened.add(channel);
      }
    } catch (error) {
      this.lost(connection, error);
      return;
    }
    // A connection dropped meanwhile tells it after the reconnect.
    if (connection === this.connection && this.subscribers.get(channel)?.has(listener)) {
      listener.listening();
    }
  }

  /** The connection in use failed: drop it, tell the subscribers, connect again later. */
  private lost(connection: PgConnection, error: unknown): void {
    if (connection !== this.connection) return; // not in use (yet, or any more)
    void this.drop(connection);
    this.tellLost(error);
    this.retry();
  }

  private tellLost(error: unknown): void {
    for (const listeners of this.subscribers.values()) {
      for (const listener of listeners) listener.lost(error);
    }
  }

  private retry(): void {
    if (this.subscribers.size === 0 || this.retryTimer !== undefined) return;
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
      this.listened = new Set();
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
