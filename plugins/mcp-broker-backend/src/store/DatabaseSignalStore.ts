/*
 * The SignalStore on the plugin's database (see src/replicas/SignalBus.ts and
 * migrations/20261128000000_replica_signals.js): one table, ordered by its auto-increment `seq`.
 * A poll is one statement per 500 addresses; consumed signals are deleted by `seq`. A bounded
 * send is one INSERT … SELECT that counts the address's unexpired signals in the same statement,
 * in a transaction holding the address's lock on PostgreSQL (lockKeyOnPostgres.ts): without it,
 * concurrent senders each count only committed rows and overshoot the bound by their number.
 */
import type { Knex } from 'knex';
import type { OutgoingSignal, Signal, SignalKind, SignalStore } from '../replicas/SignalBus';
import { chunksOf } from './DatabaseClientSessionStore';
import { lockKeyOnPostgres } from './lockKeyOnPostgres';

/** Table of signals between replicas (see migrations/). */
export const SIGNALS_TABLE = 'mcp_broker_signals';

interface SignalRow {
  seq: string | number;
  address: string;
  kind: string;
  payload: string | null;
}

/** {@link SignalStore} shared by every replica through the plugin's database. */
export class DatabaseSignalStore implements SignalStore {
  constructor(private readonly knex: Knex) {}

  async send(signal: OutgoingSignal, expiresAt: number): Promise<void> {
    await this.knex(SIGNALS_TABLE).insert({
      address: signal.address,
      kind: signal.kind,
      payload: signal.payload ?? null,
      expires_at: expiresAt,
    });
  }

  async sendBounded(
    signal: OutgoingSignal,
    expiresAt: number,
    max: number,
    now: number,
  ): Promise<boolean> {
    return this.knex.transaction(async trx => {
      await lockKeyOnPostgres(trx, signal.address);
      return insertBounded(trx, signal, expiresAt, max, now);
    });
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

  async deleteExpired(now: number): Promise<void> {
    await this.knex(SIGNALS_TABLE).where('expires_at', '<=', now).delete();
  }
}

/** The INSERT … SELECT of a bounded send (see the file comment); true when a row went in. */
async function insertBounded(
  db: Knex,
  signal: OutgoingSignal,
  expiresAt: number,
  max: number,
  now: number,
): Promise<boolean> {
  // Casts: PostgreSQL types select-list parameters as text otherwise. RETURNING (SQLite
  // ≥ 3.35) tells whether a row went in.
  const result = await db.raw(
    `insert into ?? (address, kind, payload, expires_at)
     select cast(? as varchar(255)), cast(? as varchar(16)), cast(? as text), cast(? as bigint)
     where (select count(*) from ?? where address = ? and expires_at > ?) < ?
     returning seq`,
    [
      SIGNALS_TABLE,
      signal.address,
      signal.kind,
      signal.payload ?? null,
      expiresAt,
      SIGNALS_TABLE,
      signal.address,
      now,
      max,
    ],
  );
  // pg answers { rows }, better-sqlite3 the row array itself.
  const rows: unknown[] = Array.isArray(result) ? result : result.rows;
  return rows.length === 1;
}
