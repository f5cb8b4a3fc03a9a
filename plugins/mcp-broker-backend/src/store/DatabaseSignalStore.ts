/*
 * The SignalStore on the plugin's database (see src/replicas/SignalBus.ts and
 * migrations/20261128000000_replica_signals.js): one table, ordered by its auto-increment `seq`.
 * This class is the table's one writer: every signal goes in through `insertSignal` below, as a
 * plain send, a bounded send, or a send that holds only while a condition of another table holds
 * (`sendWhile`: the held-call store's answer, only while its round is published), each one
 * INSERT … SELECT whose condition is checked in the same statement. A bounded send runs in a
 * transaction holding the address's lock on PostgreSQL (lockKeyOnPostgres.ts): without it,
 * concurrent senders each count only committed rows and overshoot the bound by their number.
 *
 * On PostgreSQL the same statement also runs `pg_notify(SIGNALS_CHANNEL, <address>)` for the row
 * it inserted: PostgreSQL delivers a notification when its transaction commits, so a listener
 * never wakes before the row is visible, and a send that inserted nothing (bound reached,
 * condition false) wakes nobody. `listen` subscribes to the channel on the replica's one
 * listening connection (PostgresNotifications.ts, shared with the access grant index); on
 * SQLite there is none and the bus polls. A read is one
 * statement per 500 addresses; consumed signals are deleted by `seq`.
 */
import type { Knex } from 'knex';
import type {
  OutgoingSignal,
  Signal,
  SignalKind,
  SignalListener,
  SignalStore,
  SignalSubscription,
} from '../replicas/SignalBus';
import { chunksOf } from './DatabaseClientSessionStore';
import { lockKeyOnPostgres } from './lockKeyOnPostgres';
import { isPostgres } from './isPostgres';
import { PostgresNotifications } from './PostgresNotifications';

/** Table of signals between replicas (see migrations/). */
export const SIGNALS_TABLE = 'mcp_broker_signals';

/** The PostgreSQL notification channel of the signals (the payload: the signal's address). */
export const SIGNALS_CHANNEL = 'mcp_broker_signals';

/**
 * A condition a send holds only while: an SQL boolean expression (e.g. an `exists (…)` on
 * another table) with its bindings, checked in the inserting statement itself.
 */
export interface SignalCondition {
  sql: string;
  bindings: readonly Knex.RawBinding[];
}

interface SignalRow {
  seq: string | number;
  address: string;
  kind: string;
  payload: string | null;
}

/** Options of {@link DatabaseSignalStore}. */
export interface DatabaseSignalStoreOptions {
  /**
   * On PostgreSQL, whether sends notify and `listen` holds a listening connection (default
   * true; `mcpBroker.signalNotifications`). False: the replicas only poll.
   */
  notify?: boolean;
  /**
   * The replica's listening connection, shared with its other listeners (plugin.ts makes one
   * per replica). Without it, a listening store opens a connection of its own.
   */
  notifications?: PostgresNotifications;
}

/** {@link SignalStore} shared by every replica through the plugin's database. */
export class DatabaseSignalStore implements SignalStore {
  private readonly notify: boolean;
  private readonly notifications: PostgresNotifications | undefined;

  constructor(
    private readonly knex: Knex,
    options: DatabaseSignalStoreOptions = {},
  ) {
    this.notify = (options.notify ?? true) && isPostgres(knex);
    this.notifications = options.notifications;
  }

  async send(signal: OutgoingSignal, expiresAt: number): Promise<void> {
    await insertSignal(this.knex, signal, expiresAt, this.notify);
  }

  async sendBounded(
    signal: OutgoingSignal,
    expiresAt: number,
    max: number,
    now: number,
  ): Promise<boolean> {
    return this.knex.transaction(async trx => {
      await lockKeyOnPostgres(trx, signal.address);
      return insertSignal(trx, signal, expiresAt, this.notify, {
        sql: '(select count(*) from ?? where address = ? and expires_at > ?) < ?',
        bindings: [SIGNALS_TABLE, signal.address, now, max],
      });
    });
  }

  /**
   * Records a signal until `expiresAt` only if `condition` holds, in one statement (so nothing
   * can come between the check and the insert); false when it did not.
   */
  sendWhile(
    signal: OutgoingSignal,
    expiresAt: number,
    condition: SignalCondition,
  ): Promise<boolean> {
    return insertSignal(this.knex, signal, expiresAt, this.notify, condition);
  }

  async read(addresses: readonly string[], now: number): Promise<Signal[]> {
    const signals: Signal[] = [];
    for (const chunk of chunksOf(addresses)) {
      const rows: SignalRow[] = await this.knex(SIGNALS_TABLE)
        .whereIn('address', chunk)
        .andWhere('expires_at', '>', now)
        .orderBy('seq')
        .select('seq', 'address', 'kind', 'payload');
      for (const row of rows) {
        signals.push({
          // PostgreSQL returns bigint columns as strings.
          seq: Number(row.seq),
          address: row.address,
          kind: row.kind as SignalKind,
          ...(row.payload === null ? {} : { payload: row.payload }),
        });
      }
    }
    return signals.sort((a, b) => a.seq - b.seq);
  }

  async remove(seqs: readonly number[]): Promise<void> {
    for (const chunk of chunksOf(seqs)) {
      await this.knex(SIGNALS_TABLE).whereIn('seq', chunk).delete();
    }
  }

  /**
   * Deletes every signal to `address` and to the addresses starting with `prefix` (what nobody
   * will wait for any more: a call ended).
   */
  async discard(address: string, prefix: string): Promise<void> {
    // `\` escapes LIKE's wildcards; both databases take the ESCAPE clause.
    const pattern = `${prefix.replace(/[\\%_]/g, c => `\\${c}`)}%`;
    await this.knex(SIGNALS_TABLE)
      .where('address', address)
      .orWhereRaw(`address like ? escape '\\'`, [pattern])
      .delete();
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(SIGNALS_TABLE).where('expires_at', '<=', now).delete();
  }

  listen(listener: SignalListener): SignalSubscription | undefined {
    if (!this.notify) return undefined;
    const notifications = this.notifications ?? new PostgresNotifications({ knex: this.knex });
    return notifications.subscribe(SIGNALS_CHANNEL, {
      notified: address => listener.signalSent(address),
      listening: () => listener.listening(),
      lost: error => listener.lost(error),
    });
  }
}

/**
 * The one INSERT of a signal (see the file comment), with `condition` checked in the same
 * statement when given, and a notification of its address when `notify`; true when a row went in.
 */
async function insertSignal(
  db: Knex,
  signal: OutgoingSignal,
  expiresAt: number,
  notify: boolean,
  condition?: SignalCondition,
): Promise<boolean> {
  // Casts: PostgreSQL types select-list parameters as text otherwise. RETURNING (SQLite
  // ≥ 3.35) tells whether a row went in.
  const insert = `insert into ?? (address, kind, payload, expires_at)
     select cast(? as varchar(255)), cast(? as varchar(16)), cast(? as text), cast(? as bigint)
     ${condition === undefined ? '' : `where ${condition.sql}`}
     returning seq, address`;
  const bindings: Knex.RawBinding[] = [
    SIGNALS_TABLE,
    signal.address,
    signal.kind,
    signal.payload ?? null,
    expiresAt,
    ...(condition?.bindings ?? []),
  ];
  if (notify) {
    const result = await db.raw(
      `with inserted as (${insert}) select seq, pg_notify(?, address) from inserted`,
      [...bindings, SIGNALS_CHANNEL],
    );
    return result.rows.length === 1;
  }
  const result = await db.raw(insert, bindings);
  // better-sqlite3 answers the row array itself.
  const rows: unknown[] = Array.isArray(result) ? result : result.rows;
  return rows.length === 1;
}
