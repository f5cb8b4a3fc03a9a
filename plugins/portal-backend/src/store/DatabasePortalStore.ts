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
 *
 * On SQLite the store switches its database to the write-ahead log at start (one fsync
 * per commit instead of several; see sqliteJournal.ts).
 *
 * Failure modes: every database error passes `mapDatabaseError` once — unique
 * violations → ConflictError, FK violations → NotFoundError, connection loss, pool or
 * statement timeouts, lock contention → ServiceUnavailableError; anything else is a bug
 * and surfaces unchanged. Nothing here logs record contents, and never a secret.
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
import { randomBytes, randomUUID } from 'node:crypto';
import type { DatabaseService, LoggerService } from '@backstage/backend-plugin-api';
import { resolvePackagePath } from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { ApiKey, ObjectRef } from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import { classifyDatabaseError, mapDatabaseError } from './databaseErrors';
import {
  KEYS_TABLE,
  KEY_COLUMNS,
  PRODUCTS_TABLE,
  SECRETS_TABLE,
  jsonOrNull,
  keyFromRow,
  nowTimestamp,
  productFromRow,
  type KeyRow,
  type ProductRow,
} from './databaseRows';
import { generateKeyName } from './generateKeyName';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetPosition } from './keysetCursor';
import { preferWriteAheadLog } from './sqliteJournal';
import type {
  KeyFilter,
  KeyReview,
  NewApiKey,
  NewApiProduct,
  Page,
  PageRequest,
  PendingKeyUpdate,
  PortalStore,
  ProductFilter,
  StoredApiProduct,
} from './types';
import { ownerOf, refText } from './productOwner';

/** The migrations directory, resolved so that it works from source and from dist. */
const MIGRATIONS_DIRECTORY = resolvePackagePath('@devportal/plugin-portal-backend', 'migrations');
/** A table name of our own, so a shared database never mixes migration histories. */
const MIGRATIONS_TABLE = 'portal__knex_migrations';
/** The page token key's table (migrations/20261124000000_pagination.js) and row. */
const PAGE_TOKEN_KEYS_TABLE = 'portal_page_token_keys';
const PAGE_TOKEN_KEY_ID = 'v1';
const PAGE_TOKEN_KEY_BYTES = 32;
/** Attempts at a fresh generated key name when one collides (odds ~1e-11 each). */
const KEY_NAME_ATTEMPTS = 5;

/** Options of {@link DatabasePortalStore.create}. */
export interface DatabasePortalStoreOptions {
  /** The plugin's database; migrations run unless `database.migrations.skip` is true. */
  database: DatabaseService;
  logger?: LoggerService;
}

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

/** The largest resource version the integer column holds. */
const MAX_RESOURCE_VERSION = 2_147_483_647;

/**
 * The counter a resourceVersion string stands for, or undefined when it cannot be one
 * of ours (then it matches no record: a ConflictError, not a database error).
 */
function parseResourceVersion(resourceVersion: string): number | undefined {
  if (!/^[1-9]\d{0,9}$/.test(resourceVersion)) {
    return undefined;
  }
  const value = Number(resourceVersion);
  return value <= MAX_RESOURCE_VERSION ? value : undefined;
}

/**
 * The {@link PortalStore} on Backstage's database (SQLite or PostgreSQL through knex).
 * See the comment at the top of this file for the schema and its guarantees.
 */
export class DatabasePortalStore implements PortalStore {
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

  private constructor(private readonly db: Knex) {}

  /**
   * The key that signs page tokens, shared by every replica on this database: the first
   * caller generates it (insert-if-absent, so concurrent first starts agree on one).
   */
  async pageTokenKey(): Promise<Buffer> {
    try {
      await this.db(PAGE_TOKEN_KEYS_TABLE)
        .insert({
          id: PAGE_TOKEN_KEY_ID,
          secret: randomBytes(PAGE_TOKEN_KEY_BYTES).toString('base64url'),
        })
        .onConflict('id')
        .ignore();
      const row = await this.db(PAGE_TOKEN_KEYS_TABLE)
        .where({ id: PAGE_TOKEN_KEY_ID })
        .first('secret');
      return Buffer.from(row.secret as string, 'base64url');
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async createProduct(product: NewApiProduct): Promise<StoredApiProduct> {
    const row: ProductRow = {
      namespace: product.namespace,
      name: product.name,
      uid: randomUUID(),
      resource_version: 1,
      created_at: nowTimestamp(),
      owner: ownerOf(product.annotations),
      labels: jsonOrNull(product.labels),
      annotations: jsonOrNull(product.annotations),
      spec: JSON.stringify(product.spec),
    };
    try {
      await this.db<ProductRow>(PRODUCTS_TABLE).insert(row);
    } catch (error) {
      throw mapDatabaseError(error, {
        conflict: `API product ${refText(product)} already exists`,
      });
    }
    return productFromRow(row);
  }

  async getProduct(ref: ObjectRef): Promise<StoredApiProduct | undefined> {
    try {
      const row = await this.db<ProductRow>(PRODUCTS_TABLE)
        .where({ namespace: ref.namespace, name: ref.name })
        .first();
      return row ? productFromRow(row) : undefined;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async listProducts(filter: ProductFilter): Promise<StoredApiProduct[]> {
    try {
      const rows = await this.productQuery(filter).orderBy(['namespace', 'name']);
      return rows.map(productFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async listProductsPage(
    filter: ProductFilter,
    page: PageRequest,
  ): Promise<Page<StoredApiProduct>> {
    const after = cursorPosition(page);
    try {
      const rows: ProductRow[] = await pageQuery(this.productQuery(filter), '', after, page.limit);
      return pageOf(rows, page.limit, productFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  private productQuery(filter: ProductFilter) {
    const query = this.db<ProductRow>(PRODUCTS_TABLE);
    if (filter.namespace !== undefined) {
      query.where('namespace', filter.namespace);
    }
    if (filter.ownerRefs !== undefined) {
      query.whereIn('owner', filter.ownerRefs);
    }
    return query;
  }

  async replaceProduct(product: StoredApiProduct): Promise<StoredApiProduct> {
    const { namespace, name, resourceVersion } = product.metadata;
    const ref = { namespace, name };
    const owner = ownerOf(product.metadata.annotations);
    try {
      return await this.db.transaction(async trx => {
        const expected = parseResourceVersion(resourceVersion);
        const updated =
          expected !== undefined
            ? await trx<ProductRow>(PRODUCTS_TABLE)
                .where({ namespace, name, resource_version: expected })
                .update({
                  owner,
                  labels: jsonOrNull(product.metadata.labels),
                  annotations: jsonOrNull(product.metadata.annotations),
                  spec: JSON.stringify(product.spec),
                  resource_version: trx.raw('resource_version + 1'),
                })
            : 0;
        const row = await trx<ProductRow>(PRODUCTS_TABLE).where(ref).first();
        if (!row) {
          throw new NotFoundError(`API product ${refText(ref)} not found`);
        }
        if (updated === 0) {
          throw new ConflictError(
            `API product ${refText(ref)} was modified: resourceVersion ${resourceVersion} is not the current ${row.resource_version}; read it again and retry`,
          );
        }
        return productFromRow(row);
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async deleteProduct(ref: ObjectRef): Promise<void> {
    try {
      await this.db.transaction(async trx => {
        const keysOfProduct = trx<KeyRow>(KEYS_TABLE)
          .select('namespace', 'name')
          .where({ namespace: ref.namespace, product_name: ref.name });
        await trx(SECRETS_TABLE).whereIn(['namespace', 'name'], keysOfProduct).delete();
        await trx<KeyRow>(KEYS_TABLE)
          .where({ namespace: ref.namespace, product_name: ref.name })
          .delete();
        const deleted = await trx<ProductRow>(PRODUCTS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name })
          .delete();
        if (deleted === 0) {
          throw new NotFoundError(`API product ${refText(ref)} not found`);
        }
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async createKey(key: NewApiKey): Promise<ApiKey> {
    const productName = key.spec.apiProductRef.name;
    const productRef = { namespace: key.namespace, name: productName };
    const missingProduct = `API product ${refText(productRef)} not found`;
    for (let attempt = 1; ; attempt++) {
      const now = nowTimestamp();
      const row: KeyRow = {
        namespace: key.namespace,
        name: generateKeyName(productName),
        uid: randomUUID(),
        resource_version: 1,
        created_at: now,
        product_name: productName,
        plan_tier: key.spec.planTier,
        use_case: key.spec.useCase ?? null,
        requested_by: key.spec.requestedBy.userId,
        requester_email: key.spec.requestedBy.email ?? null,
        expires_at: key.spec.expiresAt ?? null,
        phase: key.approval ? 'Approved' : 'Pending',
        reviewed_by: key.approval?.reviewedBy ?? null,
        reviewed_at: key.approval ? now : null,
        reason: key.approval?.reason ?? null,
        secret_revealed: false,
        secret_revealed_at: null,
      };
      try {
        await this.db.transaction(async trx => {
          // The check gives a clear error; the foreign key makes it race-free.
          const product = await trx<ProductRow>(PRODUCTS_TABLE).where(productRef).first('name');
          if (!product) {
            throw new NotFoundError(missingProduct);
          }
          await trx<KeyRow>(KEYS_TABLE).insert(row);
          if (key.approval) {
            await trx(SECRETS_TABLE).insert({
              namespace: row.namespace,
              name: row.name,
              secret: key.approval.secret,
            });
          }
        });
        return keyFromRow(row);
      } catch (error) {
        if (classifyDatabaseError(error) !== 'unique-violation') {
          throw mapDatabaseError(error, { missingReference: missingProduct });
        }
        if (!key.approval && (await this.hasPendingDuplicate(row))) {
          throw new ConflictError(
            `${row.requested_by} already has a Pending request for API product ${refText(productRef)} with plan tier ${row.plan_tier}`,
          );
        }
        // Otherwise the generated name collided with an existing key: draw again.
        if (attempt >= KEY_NAME_ATTEMPTS) {
          throw mapDatabaseError(error, {
            conflict: `Could not generate a unique name for a key of ${refText(productRef)}; retry`,
          });
        }
      }
    }
  }

  private async hasPendingDuplicate(row: KeyRow): Promise<boolean> {
    try {
      const duplicate = await this.db<KeyRow>(KEYS_TABLE)
        .where({
          namespace: row.namespace,
          product_name: row.product_name,
          requested_by: row.requested_by,
          plan_tier: row.plan_tier,
          phase: 'Pending',
        })
        .whereNot('name', row.name)
        .first('name');
      return duplicate !== undefined;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async getKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    try {
      const row: KeyRow | undefined = await this.db(KEYS_TABLE)
        .select(KEY_COLUMNS)
        .where({ namespace: ref.namespace, name: ref.name })
        .first();
      return row ? keyFromRow(row) : undefined;
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    const parts = this.keyQueries(filter);
    try {
      const rows: KeyRow[] =
        parts.length === 1
          ? await parts[0].orderBy(['k.namespace', 'k.name'])
          : await this.db
              .select<KeyRow[]>('*')
              .from(parts[0].unionAll(parts[1]).as('owned'))
              .orderBy(['namespace', 'name']);
      return rows.map(keyFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>> {
    const parts = this.keyQueries(filter);
    const after = cursorPosition(page);
    try {
      let rows: KeyRow[];
      if (parts.length === 1) {
        rows = await pageQuery(parts[0], 'k.', after, page.limit);
      } else {
        // Each half is a keyset page of its own (an index range, `limit + 1` rows at
        // most); the page is the first `limit + 1` of both, so the cost follows the page
        // size, not the table or the position.
        const [first, second] = parts.map((part, index) =>
          this.db.select('*').from(pageQuery(part, 'k.', after, page.limit).as(`half${index}`)),
        );
        rows = await pageQuery(
          this.db.select('*').from(first.unionAll(second).as('owned')),
          '',
          undefined,
          page.limit,
        );
      }
      return pageOf(rows, page.limit, keyFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /**
   * The key queries of a filter: one, or for an ownership filter two disjoint
   * index-driven halves (by requester; by products whose owner is one of the caller's
   * refs) instead of one OR that would scan every key.
   */
  private keyQueries(filter: KeyFilter): Knex.QueryBuilder[] {
    if (filter.productName !== undefined && filter.namespace === undefined) {
      throw new InputError('A key filter by product name needs the namespace');
    }
    const filtered = () => {
      const query = this.db(`${KEYS_TABLE} as k`).select(KEY_COLUMNS.map(column => `k.${column}`));
      if (filter.namespace !== undefined) {
        query.where('k.namespace', filter.namespace);
      }
      if (filter.phase !== undefined) {
        query.where('k.phase', filter.phase);
      }
      if (filter.productName !== undefined) {
        query.where('k.product_name', filter.productName);
      }
      if (filter.requestedBy !== undefined) {
        query.where('k.requested_by', filter.requestedBy);
      }
      return query;
    };
    if (filter.ownedBy === undefined) {
      return [filtered()];
    }
    const { userRef, ownershipRefs } = filter.ownedBy;
    // The second half excludes the first's rows, so UNION ALL needs no deduplication.
    const asRequester = filtered().where('k.requested_by', userRef);
    const asProductOwner = filtered()
      .join(`${PRODUCTS_TABLE} as p`, join =>
        join.on('p.namespace', '=', 'k.namespace').andOn('p.name', '=', 'k.product_name'),
      )
      .whereIn('p.owner', ownershipRefs)
      .whereNot('k.requested_by', userRef);
    return [asRequester, asProductOwner];
  }

  async updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey> {
    const changes: Partial<Record<keyof KeyRow, unknown>> = {};
    if (update.planTier !== undefined) {
      changes.plan_tier = update.planTier;
    }
    if (update.useCase !== undefined) {
      changes.use_case = update.useCase;
    }
    if (update.expiresAt !== undefined) {
      changes.expires_at = update.expiresAt;
    }
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name, phase: 'Pending' })
          .update({
            ...changes,
            resource_version: trx.raw('resource_version + 1'),
          });
        return this.readAfterTransition(trx, ref, updated, 'Pending', 'edited');
      });
    } catch (error) {
      throw mapDatabaseError(error, {
        conflict: `The requester already has a Pending request for this API product with plan tier ${update.planTier}`,
      });
    }
  }

  async reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey> {
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx<KeyRow>(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name, phase: 'Pending' })
          .update({
            phase: review.phase,
            reviewed_by: review.reviewedBy,
            reviewed_at: nowTimestamp(),
            reason: review.reason ?? null,
            resource_version: trx.raw('resource_version + 1'),
          });
        if (updated === 1 && review.phase === 'Approved') {
          await trx(SECRETS_TABLE).insert({
            namespace: ref.namespace,
            name: ref.name,
            secret: review.secret,
          });
        }
        const verb = review.phase === 'Approved' ? 'approved' : 'rejected';
        return this.readAfterTransition(trx, ref, updated, 'Pending', verb);
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async revealSecret(ref: ObjectRef): Promise<string> {
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx<KeyRow>(KEYS_TABLE)
          .where({
            namespace: ref.namespace,
            name: ref.name,
            phase: 'Approved',
            secret_revealed: false,
          })
          .update({
            secret_revealed: true,
            secret_revealed_at: nowTimestamp(),
            resource_version: trx.raw('resource_version + 1'),
          });
        if (updated === 0) {
          const row = await trx<KeyRow>(KEYS_TABLE)
            .where({ namespace: ref.namespace, name: ref.name })
            .first('phase');
          if (!row) {
            throw new NotFoundError(`API key ${refText(ref)} not found`);
          }
          if (row.phase !== 'Approved') {
            throw new ConflictError(
              `API key ${refText(ref)} is ${row.phase}, not Approved: it has no secret`,
            );
          }
          throw new ConflictError(`The secret of API key ${refText(ref)} was already revealed`);
        }
        const secret = await trx(SECRETS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name })
          .first('secret');
        if (!secret) {
          // Only possible if the secret row was removed by hand; rolls the reveal back.
          throw new NotFoundError(`The secret of API key ${refText(ref)} is missing`);
        }
        return secret.secret as string;
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  async deleteKey(ref: ObjectRef): Promise<void> {
    try {
      await this.db.transaction(async trx => {
        // Key first: it waits for a concurrent approval, whose secret the FK cascade
        // then removes; the explicit secret delete covers a database without FKs.
        const deleted = await trx<KeyRow>(KEYS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name })
          .delete();
        await trx(SECRETS_TABLE).where({ namespace: ref.namespace, name: ref.name }).delete();
        if (deleted === 0) {
          throw new NotFoundError(`API key ${refText(ref)} not found`);
        }
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /**
   * The key after a compare-and-set on its phase: the new state when the update hit a
   * row, otherwise NotFoundError or a ConflictError naming the current phase.
   */
  private async readAfterTransition(
    trx: Knex.Transaction,
    ref: ObjectRef,
    updated: number,
    expectedPhase: string,
    verb: string,
  ): Promise<ApiKey> {
    const row: KeyRow | undefined = await trx(KEYS_TABLE)
      .select(KEY_COLUMNS)
      .where({ namespace: ref.namespace, name: ref.name })
      .first();
    if (!row) {
      throw new NotFoundError(`API key ${refText(ref)} not found`);
    }
    if (updated === 0) {
      throw new ConflictError(
        `API key ${refText(ref)} is ${row.phase}, not ${expectedPhase}: it can no longer be ${verb}`,
      );
    }
    return keyFromRow(row);
  }
}

/** The position a page starts after, from its cursor (InputError for a foreign one). */
function cursorPosition(page: PageRequest): KeysetPosition | undefined {
  return page.cursor === undefined ? undefined : decodeKeysetCursor(page.cursor);
}

/**
 * A keyset page: rows strictly after `after` in (created_at, namespace, name) order,
 * `limit + 1` of them (the extra row only tells whether more follow). `prefix` is the
 * table alias with its dot (or ''). The row-value comparison is an index range on the
 * pagination indexes (migrations/20261124000000_pagination.js) in SQLite and PostgreSQL;
 * the redundant `created_at >=` lets either planner start the range even where the
 * filter's equality columns come first.
 */
function pageQuery<Q extends Knex.QueryBuilder>(
  query: Q,
  prefix: string,
  after: KeysetPosition | undefined,
  limit: number,
): Q {
  const [createdAt, namespace, name] = ['created_at', 'namespace', 'name'].map(
    column => `${prefix}${column}`,
  );
  if (after !== undefined) {
    query
      .where(createdAt, '>=', after.createdAt)
      .whereRaw('(??, ??, ??) > (?, ?, ?)', [
        createdAt,
        namespace,
        name,
        after.createdAt,
        after.namespace,
        after.name,
      ]);
  }
  return query.orderBy([createdAt, namespace, name]).limit(limit + 1) as Q;
}

/** A page from `limit + 1` rows: the cursor marks the last item kept when more follow. */
function pageOf<R extends { created_at: string; namespace: string; name: string }, T>(
  rows: R[],
  limit: number,
  toItem: (row: R) => T,
): Page<T> {
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1];
  return {
    items: kept.map(toItem),
    cursor:
      rows.length > limit
        ? encodeKeysetCursor({
            createdAt: last.created_at,
            namespace: last.namespace,
            name: last.name,
          })
        : undefined,
  };
}
