/*
 * A count-then-insert that must hold across replicas (a bound per key: a principal's sessions, a
 * session's waiting cancellations) runs in one transaction that first takes this lock. On
 * PostgreSQL two transactions of READ COMMITTED each count only what was committed when their
 * statement began, so concurrent senders would each pass the count and overshoot the bound by
 * their number; a transaction-scoped advisory lock keyed by the bounded key serialises them
 * (released at commit or rollback; other keys do not wait). SQLite needs none: one write
 * transaction at a time, and nothing comes in between.
 */
import { createHash } from 'node:crypto';
import type { Knex } from 'knex';
import { isPostgres } from './isPostgres';

/** `key` as a PostgreSQL advisory lock key (64 bits of its SHA-256, signed). */
function advisoryLockKey(key: string): string {
  return createHash('sha256').update(key).digest().readBigInt64BE(0).toString();
}

/**
 * Inside transaction `trx`: on PostgreSQL waits for, and holds until the transaction ends, the
 * advisory lock of `key`; elsewhere does nothing. See the file comment.
 */
export async function lockKeyOnPostgres(trx: Knex.Transaction, key: string): Promise<void> {
  if (!isPostgres(trx)) return;
  await trx.raw('SELECT pg_advisory_xact_lock(?::bigint)', [advisoryLockKey(key)]);
}
