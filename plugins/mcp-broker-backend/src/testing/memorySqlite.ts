/* A fresh in-memory SQLite database for a plugin-level test (startTestBackend's database service). */
import knexFactory, { type Knex } from 'knex';

/** A knex client on a new, empty in-memory SQLite database; the caller destroys it. */
export function memorySqlite(): Knex {
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: ':memory:' },
    useNullAsDefault: true,
  });
}
