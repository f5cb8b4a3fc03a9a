/*
 * DatabasePortalStore: the PortalStore on Backstage's database (knex; SQLite in
 * development, PostgreSQL in production).
 *
 * Schema (migrations/): `portal_api_products` (PK namespace+name, index on owner),
 * `portal_api_keys` (PK namespace+name, FK namespace+product_name → products ON DELETE
 * CASCADE, indexes on requested_by, namespace+product_name, phase, and a partial unique
 * index allowing one Pending request per requester+product+tier), and
 * `portal_api_key_secrets` (PK namespace+name, FK → keys ON DELETE CASCADE). Secrets are
 * only ever read by `revealSecret`; no other query touches that table except deletes.
 *
 * Guarantees, each from a single statement or transaction rather than read-check-write:
 * - reviewKey / updatePendingKey: `UPDATE … WHERE phase = 'Pending'`; zero rows → read
 *   the phase for the ConflictError (or NotFoundError). An approval's secret is written
 *   in the same transaction.
 * - revealSecret: `UPDATE … SET secret_revealed = true WHERE phase = 'Approved' AND
 *   secret_revealed = false`; only the caller whose update hit a row reads the secret
 *   (PostgreSQL row locks and SQLite's single writer serialise the contenders).
 * - replaceProduct: `UPDATE … WHERE resource_version = ?`; versions are per-record
 *   counters.
 * - Duplicate Pending requests: the partial unique index, so concurrent creates race
 *   to the index, not to a prior SELECT.
 * - createKey for a vanishing product: the foreign key (PostgreSQL locks the product row
 *   while inserting; a concurrent product delete cascades over the new key).
 * - deleteProduct / deleteKey: one transaction, plus FK cascades for rows written by
 *   transactions that commit while the delete waits.
 * - claimExpiryAnnouncements: `UPDATE … SET expiry_announced_at WHERE … AND
 *   expiry_announced_at IS NULL` per due key (migrations/20261206000000_key_expiry.js).
 *
 * On SQLite the store switches its database to the write-ahead log at start (one fsync
 * per commit instead of several; see sqliteJournal.ts).
 *
 * Failure modes: every database error passes `mapDatabaseError` once — unique
 * violations → ConflictError, FK violations → NotFoundError, connection loss, pool or
 * statement timeouts, lock contention → ServiceUnavailableError; anything else is a bug
 * and surfaces unchanged. Nothing here logs record contents, and never a secret.
 *
 * This class is the composition (ComposedPortalStore.ts); each table has its own file:
 * DatabaseProductStore.ts (products), DatabaseKeyRequestStore.ts (keys),
 * DatabaseKeySecrets.ts (their secrets), DatabaseMcpGrants.ts (live access grants, on the
 * target columns of migrations/20261208000000_mcp_targets.js); keyset pages: keysetPages.ts; the schema:
 * databaseMigrations.ts; the page token key: pageTokenKey.ts.
 *
 * Pages (listProductsPage, listKeysPage) are keyset queries in (created_at, namespace,
 * name) order on the indexes of migrations/20261124000000_pagination.js: `limit + 1` rows
 * of one index range, so a page costs the same at any position and table size; the
 * cursor is the last row's sort key (keysetCursor.ts). Whole lists (listProducts,
 * listKeys) are ordered by namespace, then name (like Kubernetes). The ownership filter is
 * a UNION ALL of two index-driven queries (by requester; by products whose owner is one
 * of the caller's refs, joined to keys by (namespace, product_name)); in pages each half
 * is a keyset query of its own (the requester half an index range, the product-owner
 * half sorts only the keys of the caller's products after the cursor), so its cost
 * follows the result size, not the table size: with 100,000 keys, 1,000 users and 100
 * products, a user's 100 keys list in about 1 ms on SQLite and PostgreSQL, as fast as
 * with 1,000 keys (bench/portal.mjs; docs/benchmarks.md).
 */
import type { DatabaseService, LoggerService } from '@backstage/backend-plugin-api';
import type { Knex } from 'knex';
import { ComposedPortalStore } from './ComposedPortalStore';
import { DatabaseKeyRequestStore } from './DatabaseKeyRequestStore';
import { DatabaseKeySecrets } from './DatabaseKeySecrets';
import { DatabaseMcpGrants } from './DatabaseMcpGrants';
import { mapDatabaseError } from './databaseErrors';
import { migrateUp } from './databaseMigrations';
import { DatabaseProductStore } from './DatabaseProductStore';
import { pageTokenKey } from './pageTokenKey';
import { preferWriteAheadLog } from './sqliteJournal';
import type { PortalStore } from './types';

/** Options of {@link DatabasePortalStore.create}. */
export interface DatabasePortalStoreOptions {
  /** The plugin's database; migrations run unless `database.migrations.skip` is true. */
  database: DatabaseService;
  logger?: LoggerService;
}

/**
 * The {@link PortalStore} on Backstage's database (SQLite or PostgreSQL through knex).
 * See the comment at the top of this file for the schema and its guarantees.
 */
export class DatabasePortalStore extends ComposedPortalStore implements PortalStore {
  /** Connects to the plugin's database and brings its schema up to date. */
  static async create(options: DatabasePortalStoreOptions): Promise<DatabasePortalStore> {
    const knex = await options.database.getClient();
    if (!options.database.migrations?.skip) {
      options.logger?.debug('Running portal database migrations');
      try {
        await migrateUp(knex);
      } catch (error) {
        throw mapDatabaseError(error);
      }
    }
    await preferWriteAheadLog(knex, options.logger);
    return new DatabasePortalStore(knex);
  }

  readonly #db: Knex;

  private constructor(db: Knex) {
    const secrets = new DatabaseKeySecrets(db);
    super({
      products: new DatabaseProductStore(db, secrets),
      keys: new DatabaseKeyRequestStore(db, secrets),
      grants: new DatabaseMcpGrants(db),
      secrets,
    });
    this.#db = db;
  }

  /**
   * The key that signs page tokens, shared by every replica on this database: the first
   * caller generates it (insert-if-absent, so concurrent first starts agree on one).
   */
  pageTokenKey(): Promise<Buffer> {
    return pageTokenKey(this.#db);
  }
}
