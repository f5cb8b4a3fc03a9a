/* The broker's listening connections as PostgreSQL sees them, for the LISTEN/NOTIFY tests. */
import type { Knex } from 'knex';

/**
 * The server processes of `knex`'s database (other than its own) whose last statement was one of
 * the broker's `LISTEN`s: the listening connections (their keep-alive query comes only every
 * 30 s).
 */
export async function listeningBackends(knex: Knex): Promise<number[]> {
  const result = await knex.raw(
    `select pid from pg_stat_activity
     where datname = current_database() and query like 'LISTEN mcp\\_broker\\_%'
       and pid <> pg_backend_pid()`,
  );
  return result.rows.map((row: { pid: number }) => row.pid);
}
