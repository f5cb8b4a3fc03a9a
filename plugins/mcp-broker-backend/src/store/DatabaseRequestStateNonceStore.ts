/*
 * The shared RequestStateNonceStore on the plugin's database (the requestState keys are a key
 * ring: DatabaseBrokerKeyStore.ts).
 *
 * A claim is one `INSERT … ON CONFLICT DO NOTHING RETURNING nonce` on the primary key: of any
 * number of concurrent claims of one nonce, on any replica, exactly one inserts the row and gets
 * it back (PostgreSQL's unique index, SQLite's single writer); the others get no row. Nothing is
 * read first, so there is no window between a check and a write.
 */
import type { Knex } from 'knex';
import type { RequestStateNonceStore } from '../inputRequests/requestStateNonces';

/** Table of used requestState nonces (see migrations/). */
export const REQUEST_STATE_NONCES_TABLE = 'mcp_broker_request_state_nonces';

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
