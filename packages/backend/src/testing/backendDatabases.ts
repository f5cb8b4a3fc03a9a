/*
 * The databases the end-to-end tests run the real backend on: SQLite in memory always,
 * and PostgreSQL when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set (as
 * .ci/run does). Each PostgreSQL run uses its own database-name prefix, so parallel runs
 * never share data, and drops its databases afterwards.
 */

/** The part of `pg`'s client the tests use (`pg` ships no type declarations in this repo). */
export interface PgClientLike {
  connect(): Promise<void>;
  query<Row>(text: string, values?: unknown[]): Promise<{ rows: Row[] }>;
  end(): Promise<void>;
}
/** `pg`'s Client, for tests that read or write a plugin's database directly. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const { Client: PgClient } = require('pg') as {
  Client: new (options: Record<string, unknown>) => PgClientLike;
};

const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';

/**
 * Connections each of a test backend's database clients may hold. A backend opens about ten
 * clients (one per plugin, plus the RBAC plugin's own to the catalog's database), and knex's
 * default of 10 each lets one backend under a burst of requests hold about 100 connections.
 * Jest runs two files at once, some with two replicas, so three or four backends can share the
 * temporary PostgreSQL of `yarn test` (300 connections): uncapped they exhausted it, and the
 * RBAC plugin, whose role look-up then failed with "too many clients already", denied the
 * request (a 403 in a portal test, in CI). Capped, four backends hold at most about 160.
 * Everything also runs on SQLite's single connection, so a small pool is enough.
 */
const POOL_MAX_PER_CLIENT = 4;

/** One database setup for the backend under test. */
export interface BackendDatabase {
  name: 'SQLite' | 'PostgreSQL';
  /** `backend.database` config for startBackendProcess (undefined: app-config's SQLite). */
  config?: Record<string, unknown>;
  /** Drops what the run created; call after the backend stopped. */
  cleanup(): Promise<void>;
}

/**
 * `postgresql://user:password@host:port` as a connection object: the RBAC plugin refuses
 * PostgreSQL connection strings. Also used by bench/lib/portalDatabases.mjs.
 */
export function connectionObject(connectionString: string) {
  const url = new URL(connectionString);
  return {
    host: url.hostname,
    port: Number(url.port || 5432),
    user: decodeURIComponent(url.username),
    password: decodeURIComponent(url.password),
  };
}

/** SQLite, plus PostgreSQL when configured (otherwise says so, once). */
export function backendDatabases(purpose: string): BackendDatabase[] {
  const sqlite: BackendDatabase = { name: 'SQLite', cleanup: async () => {} };
  const connection = process.env[POSTGRES_ENV];
  if (connection === undefined || connection === '') {
    // eslint-disable-next-line no-console
    console.warn(`${purpose}: ${POSTGRES_ENV} is not set, so the PostgreSQL half is skipped`);
    return [sqlite];
  }
  const prefix = `e2e_${Date.now().toString(36)}_${process.pid}_`;
  return [
    sqlite,
    {
      name: 'PostgreSQL',
      config: {
        client: 'pg',
        connection: connectionObject(connection),
        prefix,
        knexConfig: { pool: { min: 0, max: POOL_MAX_PER_CLIENT } },
      },
      async cleanup() {
        const client = new PgClient({ connectionString: connection });
        await client.connect();
        try {
          const { rows } = await client.query<{ datname: string }>(
            'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
            [prefix],
          );
          for (const { datname } of rows) {
            await client.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
          }
        } finally {
          await client.end();
        }
      },
    },
  ];
}
