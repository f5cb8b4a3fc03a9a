/*
 * The shared RequestStateNonceStore on the plugin's database, and the shared requestState key.
 *
 * A claim is one `INSERT … ON CONFLICT DO NOTHING RETURNING nonce` on the primary key: of any
 * number of concurrent claims of one nonce, on any replica, exactly one inserts the row and gets
 * it back (PostgreSQL's unique index, SQLite's single writer); the others get no row. Nothing is
 * read first, so there is no window between a check and a write.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import type { RequestStateKeyStore } from '../inputRequests/requestStateKey';
import type { RequestStateNonceStore } from '../inputRequests/requestStateNonces';

/** Table of used requestState nonces (see migrations/). */
export const REQUEST_STATE_NONCES_TABLE = 'mcp_broker_request_state_nonces';
/** Table of keys shared by the replicas (see migrations/). */
export const BROKER_KEYS_TABLE = 'mcp_broker_keys';
const REQUEST_STATE_KEY_ID = 'request-state';
const KEY_BYTES = 32;

/** {@link RequestStateNonceStore} shared by every replica through the plugin's database. */
export class DatabaseRequestStateNonceStore implements RequestStateNonceStore {
  constructor(private readonly knex: Knex) {}

  async claim(nonce: string, expiresAt: number): Promise<boolean> {
    const { sql, bindings } = this.knex(REQUEST_STATE_NONCES_TABLE)
      .insert({ nonce, expires_at: expiresAt })
      .onConflict('nonce')
      .ignore()
      .toSQL();
    // Raw because knex leaves RETURNING off inserts for SQLite, which supports it since 3.35.
    const result = await this.knex.raw(`${sql} returning nonce`, bindings);
    // pg answers { rows }, better-sqlite3 the row array itself.
    const rows: unknown[] = Array.isArray(result) ? result : result.rows;
    return rows.length === 1;
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(REQUEST_STATE_NONCES_TABLE).where('expires_at', '<=', now).delete();
  }
}

/** {@link RequestStateKeyStore} on the plugin's database: one key for every replica. */
export class DatabaseRequestStateKeyStore implements RequestStateKeyStore {
  constructor(private readonly knex: Knex) {}

  async requestStateKey(): Promise<Buffer> {
    // Insert-if-absent, then read: concurrent first starts all read the one row that won.
    await this.knex(BROKER_KEYS_TABLE)
      .insert({ id: REQUEST_STATE_KEY_ID, secret: randomBytes(KEY_BYTES).toString('base64url') })
      .onConflict('id')
      .ignore();
    const row = await this.knex(BROKER_KEYS_TABLE)
      .where({ id: REQUEST_STATE_KEY_ID })
      .first('secret');
    return Buffer.from(row.secret as string, 'base64url');
  }
}
