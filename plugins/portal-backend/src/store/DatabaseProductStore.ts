/*
 * The API products of the database store: `portal_api_products` (PK namespace+name,
 * index on owner; `target_kind`/`target_name` mirror `spec.targetRef` for the target filter).
 *
 * - replaceProduct: `UPDATE … WHERE resource_version = ?`; versions are per-record
 *   counters. Given tiers that must be unused, the same transaction then counts the live
 *   grants of each and rolls back when one has any. The UPDATE holds the product row's lock
 *   until the commit, and an approval of an access request takes that row's lock (FOR SHARE)
 *   before it checks the tier (DatabaseKeyRequestStore.ts): so either the approval waits and
 *   then finds the tier gone, or this count, a statement after the approval committed, sees
 *   the grant. SQLite runs one write transaction at a time.
 * - deleteProduct: one transaction (the product's key secrets, its keys, the product),
 *   plus FK cascades for rows written by transactions that commit while the delete waits.
 * - Whole lists are ordered by namespace, then name (like Kubernetes); pages are keyset
 *   queries (keysetPages.ts).
 */
import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '@backstage/errors';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import type { DatabaseKeySecrets } from './DatabaseKeySecrets';
import { mapDatabaseError } from './databaseErrors';
import {
  KEYS_TABLE,
  PRODUCTS_TABLE,
  jsonOrNull,
  nowTimestamp,
  productFromRow,
  targetColumns,
  type KeyRow,
  type ProductRow,
} from './databaseRows';
import { countLiveGrantsIn } from './DatabaseMcpGrants';
import { cursorPosition, pageOf, pageQuery } from './keysetPages';
import { tierInUseError } from './planTierConflicts';
import { ownerOf, refText } from './productOwner';
import type {
  NewApiProduct,
  Page,
  PageRequest,
  ProductFilter,
  StoredApiProduct,
  UnusedTiersCondition,
} from './types';

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

/** The products of the database `PortalStore`. See the comment at the top of this file. */
export class DatabaseProductStore {
  constructor(
    private readonly db: Knex,
    private readonly secrets: DatabaseKeySecrets,
  ) {}

  /** See `PortalStore.createProduct`. */
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
      ...targetColumns(product.spec.targetRef),
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

  /** See `PortalStore.getProduct`. */
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

  /** See `PortalStore.listProducts`. */
  async listProducts(filter: ProductFilter): Promise<StoredApiProduct[]> {
    try {
      const rows = await this.productQuery(filter).orderBy(['namespace', 'name']);
      return rows.map(productFromRow);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.listProductsPage`. */
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
    if (filter.targetKind !== undefined) {
      query.where('target_kind', filter.targetKind);
      if (filter.targetName !== undefined) {
        query.where('target_name', filter.targetName);
      }
    }
    return query;
  }

  /** See `PortalStore.replaceProduct` and the comment at the top of this file. */
  async replaceProduct(
    product: StoredApiProduct,
    unused?: UnusedTiersCondition,
  ): Promise<StoredApiProduct> {
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
                  ...targetColumns(product.spec.targetRef),
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
        if (unused !== undefined) {
          for (const tier of unused.tiers) {
            const count = await countLiveGrantsIn(trx, ref, tier, unused.now);
            if (count > 0) throw tierInUseError(tier, count);
          }
        }
        return productFromRow(row);
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }

  /** See `PortalStore.deleteProduct`. */
  async deleteProduct(ref: ObjectRef): Promise<void> {
    try {
      await this.db.transaction(async trx => {
        const keysOfProduct = trx<KeyRow>(KEYS_TABLE)
          .select('namespace', 'name')
          .where({ namespace: ref.namespace, product_name: ref.name });
        await this.secrets.deleteOfKeys(trx, keysOfProduct);
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
}
