/* Whether a knex client (or transaction) talks to PostgreSQL: where the stores lock and notify. */
import type { Knex } from 'knex';

/** True when `db` is a PostgreSQL client or transaction (SQLite otherwise, in this plugin). */
export function isPostgres(db: Knex): boolean {
  return db.client.config.client === 'pg';
}
