/*
 * The databases a portal benchmark runs on, seeded BEFORE the backend starts on them:
 * - SQLite: a fresh directory used as `backend.database.connection.directory`; Backstage's
 *   better-sqlite3 connector then keeps each plugin in `<directory>/<pluginId>.sqlite`,
 *   so the portal's file is `<directory>/portal.sqlite`.
 * - PostgreSQL: a unique `backend.database.prefix`; Backstage then keeps each plugin in
 *   the database `<prefix><pluginId>`, so the portal's is `<prefix>portal`. Every
 *   database with the prefix is dropped afterwards.
 *
 * Seeding runs the portal plugin's own migrations (`migrateUp` of databaseMigrations.ts)
 * and batch-inserts the generated rows with knex, so the schema is exactly the plugin's.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { keyBatch, productRows } from './portalData.mjs';

const require = createRequire(import.meta.url);
// Loads the plugin's TypeScript (migrations helper, store) straight from the repository.
require('@backstage/cli/config/nodeTransform.cjs');
const knexFactory = require('knex');
const pg = require('pg');
const {
  DatabasePortalStore,
} = require('../../plugins/portal-backend/src/store/DatabasePortalStore.ts');
const { migrateUp } = require('../../plugins/portal-backend/src/store/databaseMigrations.ts');
const { connectionObject } = require('../../packages/backend/src/testing/backendDatabases.ts');

/** Rows per INSERT statement (17 columns: well inside SQLite's and PostgreSQL's limits). */
const INSERT_BATCH = 500;

/** The PostgreSQL server the benchmark uses, as a connection string. */
export function postgresUrl() {
  return (
    process.env.BENCH_POSTGRES_URL ??
    process.env.BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING ??
    'postgresql://postgres:postgres@127.0.0.1:5432'
  );
}

/**
 * A fresh, empty database setup of `kind` ('sqlite' | 'postgres') named after `label`:
 * `{ kind, label, backendConfig, openPortal(), cleanup() }`.
 */
export function createBenchDatabase(kind, label) {
  if (kind === 'sqlite') {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), `bench-portal-${label}-`));
    return {
      kind,
      label,
      // The RBAC plugin and the catalog get their own files next to the portal's.
      backendConfig: { client: 'better-sqlite3', connection: { directory } },
      openPortal: () =>
        knexFactory({
          client: 'better-sqlite3',
          connection: { filename: path.join(directory, 'portal.sqlite') },
          useNullAsDefault: true,
        }),
      async cleanup() {
        fs.rmSync(directory, { recursive: true, force: true });
      },
    };
  }
  if (kind === 'postgres') {
    const url = postgresUrl();
    const connection = connectionObject(url);
    const prefix = `bench_${Date.now().toString(36)}_${process.pid}_${label}_`.toLowerCase();
    return {
      kind,
      label,
      // A connection object: the RBAC plugin refuses PostgreSQL connection strings.
      backendConfig: { client: 'pg', connection, prefix },
      async openPortal() {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          await admin.query(`CREATE DATABASE "${prefix}portal"`);
        } catch (error) {
          if (error.code !== '42P04') throw error; // already exists: fine
        } finally {
          await admin.end();
        }
        return knexFactory({
          client: 'pg',
          connection: { ...connection, database: `${prefix}portal` },
          pool: { min: 0, max: 2 },
        });
      },
      async cleanup() {
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        try {
          const { rows } = await admin.query(
            'SELECT datname FROM pg_database WHERE starts_with(datname, $1)',
            [prefix],
          );
          for (const { datname } of rows) {
            await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
          }
        } finally {
          await admin.end();
        }
      },
    };
  }
  throw new Error(`unknown database kind ${kind}: use sqlite or postgres`);
}

/**
 * Runs the portal's migrations on `knex` and inserts the products and `recordCount` keys
 * (with the secrets of Approved keys). Returns the seconds it took.
 */
export async function seedPortal(knex, recordCount) {
  const started = performance.now();
  const isPostgres = knex.client.config.client === 'pg';
  await migrateUp(knex);
  const secrets = [];
  await knex.transaction(async trx => {
    await trx('portal_api_products').insert(productRows());
    for (let from = 0; from < recordCount; from += INSERT_BATCH) {
      const batch = keyBatch(from, Math.min(recordCount, from + INSERT_BATCH));
      await trx('portal_api_keys').insert(batch.keys);
      secrets.push(...batch.secrets);
    }
  });
  if (isPostgres) {
    // Statistics before the secrets go in: PostgreSQL caches the plan of a foreign-key
    // check per connection, and one planned on the fresh, empty keys table is a sequential
    // scan that every later secret row would repeat (quadratic). The backend's own
    // connections start after this ANALYZE (what autovacuum does after a bulk load).
    await knex.raw('ANALYZE');
  }
  await knex.transaction(async trx => {
    for (let from = 0; from < secrets.length; from += INSERT_BATCH) {
      await trx('portal_api_key_secrets').insert(secrets.slice(from, from + INSERT_BATCH));
    }
  });
  if (isPostgres) await knex.raw('ANALYZE');
  return (performance.now() - started) / 1000;
}

/**
 * Sets the given keys back to Pending (and drops their secrets), so that a bulk approval
 * can be measured again on the same rows.
 */
export async function resetToPending(knex, names) {
  await knex.transaction(async trx => {
    await trx('portal_api_key_secrets').whereIn('name', names).delete();
    await trx('portal_api_keys').whereIn('name', names).update({
      phase: 'Pending',
      reviewed_by: null,
      reviewed_at: null,
      reason: null,
      resource_version: 1,
    });
  });
}

/** The plugin's store on `knex` (schema already migrated), for store-level timings. */
export async function portalStoreOn(knex) {
  return DatabasePortalStore.create({
    database: { getClient: async () => knex, migrations: { skip: true } },
  });
}
