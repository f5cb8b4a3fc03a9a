/*
 * The portal's database schema (migrations/), in a migrations table of its own so that a
 * shared database never mixes migration histories.
 */
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import type { Knex } from 'knex';

/** The migrations directory, resolved so that it works from source and from dist. */
const MIGRATIONS_DIRECTORY = resolvePackagePath('@devportal/plugin-portal-backend', 'migrations');
/** A table name of our own, so a shared database never mixes migration histories. */
const MIGRATIONS_TABLE = 'portal__knex_migrations';

/** Runs the store's migrations up to the latest one. */
export async function migrateUp(knex: Knex): Promise<void> {
  await knex.migrate.latest({
    directory: MIGRATIONS_DIRECTORY,
    tableName: MIGRATIONS_TABLE,
  });
}

/** Rolls back every migration of the store (drops its tables). */
export async function migrateDownAll(knex: Knex): Promise<void> {
  await knex.migrate.rollback(
    { directory: MIGRATIONS_DIRECTORY, tableName: MIGRATIONS_TABLE },
    true,
  );
}

/** Rolls back one migration by its file name (tests of a migration's backfill). */
export async function migrateDown(knex: Knex, name: string): Promise<void> {
  await knex.migrate.down({ directory: MIGRATIONS_DIRECTORY, tableName: MIGRATIONS_TABLE, name });
}
