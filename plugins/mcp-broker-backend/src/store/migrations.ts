/* The broker's database migrations (only needed for mcpBroker.sessionStore: database). */
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import type { Knex } from 'knex';

/** The migrations directory, resolved so that it works from source and from dist. */
const MIGRATIONS_DIRECTORY = resolvePackagePath(
  '@devportal/plugin-mcp-broker-backend',
  'migrations',
);
/** A table name of our own, so a shared database never mixes migration histories. */
const MIGRATIONS_TABLE = 'mcp_broker__knex_migrations';

/** Where the broker's migrations are and where knex records them (for one-step moves). */
export const BROKER_MIGRATIONS: Readonly<Knex.MigratorConfig> = Object.freeze({
  directory: MIGRATIONS_DIRECTORY,
  tableName: MIGRATIONS_TABLE,
});

/**
 * Runs the broker's migrations up to the latest one. Several replicas starting at once are
 * safe: knex holds its migration lock (a row in `<table>_lock`) while it migrates.
 */
export async function migrateBrokerDatabase(knex: Knex): Promise<void> {
  await knex.migrate.latest({ directory: MIGRATIONS_DIRECTORY, tableName: MIGRATIONS_TABLE });
}

/** Rolls every broker migration back (drops the broker's tables). */
export async function rollbackBrokerDatabase(knex: Knex): Promise<void> {
  await knex.migrate.rollback(
    { directory: MIGRATIONS_DIRECTORY, tableName: MIGRATIONS_TABLE },
    true,
  );
}
