/*
 * The access grant reads of the database store (contract mcp-access §3.3, §3.5, §4.8): live
 * grants — Approved access requests of MCP products, unexpired — with their products.
 *
 * - listMcpGrantsPage: a keyset page in (created_at, namespace, name) order of the keys on
 *   the partial index `portal_api_keys_mcp_grants_idx` (mcp_target, created_at, namespace,
 *   name) WHERE phase = 'Approved' AND mcp_target IS NOT NULL, joined to each key's product.
 *   A target filter is an equality (or, for a kind alone, a prefix) on its leading column.
 * - countLiveGrants: the Approved keys of one product and tier that are unexpired.
 *
 * Expiry: `expires_at` is RFC 3339 as the client wrote it, possibly with an offset, so its
 * text does not sort in time order. The query leaves out what has expired whatever its
 * offset (expiryDue.ts's text bound) and the time check in process decides the rest. A page
 * that loses rows to that check reads on from the last row it read until it is full, so a
 * page is short only at the end of the list.
 */
import type { ObjectRef } from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import { mapDatabaseError } from './databaseErrors';
import {
  KEYS_TABLE,
  KEY_COLUMNS,
  PRODUCTS_TABLE,
  keyFromRow,
  productFromRow,
  type KeyRow,
  type ProductRow,
} from './databaseRows';
import { isExpiryDue, liveExpiryTextBound } from './expiryDue';
import type { KeysetPosition } from './keysetCursor';
import { cursorPosition, pageOf, pageQuery } from './keysetPages';
import { assertGrantFilterNamesNamespace } from './mcpGrantFilter';
import type { McpGrantFilter, Page, PageRequest, StoredMcpGrant } from './types';

/** The product columns of a grant row, each under a name of its own (`product_<column>`). */
const PRODUCT_COLUMNS: Array<keyof ProductRow> = [
  'namespace',
  'name',
  'uid',
  'resource_version',
  'created_at',
  'owner',
  'labels',
  'annotations',
  'spec',
  'target_kind',
  'target_name',
];

/** A key row with its product's columns. */
type GrantRow = KeyRow & Record<`product_${keyof ProductRow}`, unknown>;

function grantFromRow(row: GrantRow): StoredMcpGrant {
  const product = Object.fromEntries(
    PRODUCT_COLUMNS.map(column => [column, row[`product_${column}`]]),
  ) as unknown as ProductRow;
  return { key: keyFromRow(row), product: productFromRow(product) };
}

/** The access grant reads of the database `PortalStore`. See the comment at the top of this file. */
export class DatabaseMcpGrants {
  constructor(private readonly db: Knex) {}

  /** See `PortalStore.listMcpGrantsPage` and the comment at the top of this file. */
  async listMcpGrantsPage(
    filter: McpGrantFilter,
    now: Date,
    page: PageRequest,
  ): Promise<Page<StoredMcpGrant>> {
    assertGrantFilterNamesNamespace(filter);
    let after: KeysetPosition | undefined = cursorPosition(page);
    const live: GrantRow[] = [];
    try {
      for (;;) {
        const rows: GrantRow[] = await pageQuery(
          this.grantQuery(filter, now),
          'k.',
          after,
          page.limit,
        );
        live.push(...rows.filter(row => !isExpiryDue(row.expires_at, now)));
        // Full (one row beyond the page tells more follow), or the end of the list.
        if (live.length > page.limit || rows.length <= page.limit) break;
        const last = rows[rows.length - 1];
        after = { createdAt: last.created_at, namespace: last.namespace, name: last.name };
      }
    } catch (error) {
      throw mapDatabaseError(error);
    }
    return pageOf(live, page.limit, grantFromRow);
  }

  private grantQuery(filter: McpGrantFilter, now: Date): Knex.QueryBuilder {
    const query = this.db(`${KEYS_TABLE} as k`)
      .join(`${PRODUCTS_TABLE} as p`, join =>
        join.on('p.namespace', '=', 'k.namespace').andOn('p.name', '=', 'k.product_name'),
      )
      .select(KEY_COLUMNS.map(column => `k.${column}`))
      .select(PRODUCT_COLUMNS.map(column => `p.${column} as product_${column}`))
      // The partial index's own condition, so both planners may use it.
      .where('k.phase', 'Approved')
      .whereNotNull('k.mcp_target')
      .where(notExpiredBy('k.expires_at', now));
    if (filter.targetKind !== undefined) {
      if (filter.targetName !== undefined) {
        query.where('k.mcp_target', `${filter.targetKind}/${filter.targetName}`);
      } else {
        query.where('k.mcp_target', 'like', `${filter.targetKind}/%`);
      }
    }
    if (filter.namespace !== undefined) {
      query.where('k.namespace', filter.namespace);
    }
    if (filter.productName !== undefined) {
      query.where('k.product_name', filter.productName);
    }
    if (filter.requestedBy !== undefined) {
      query.where('k.requested_by', filter.requestedBy);
    }
    return query;
  }

  /** See `PortalStore.countLiveGrants` and the comment at the top of this file. */
  async countLiveGrants(product: ObjectRef, tier: string, now: Date): Promise<number> {
    try {
      return await countLiveGrantsIn(this.db, product, tier, now);
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }
}

/**
 * `PortalStore.countLiveGrants` on `db`, which may be a transaction (the tier check of
 * `replaceProduct`, DatabaseProductStore.ts); database errors are the caller's to map.
 */
export async function countLiveGrantsIn(
  db: Knex | Knex.Transaction,
  product: ObjectRef,
  tier: string,
  now: Date,
): Promise<number> {
  const rows: Array<Pick<KeyRow, 'expires_at'>> = await db(KEYS_TABLE)
    .select('expires_at')
    .where({
      namespace: product.namespace,
      product_name: product.name,
      plan_tier: tier,
      phase: 'Approved',
    })
    .where(notExpiredBy('expires_at', now));
  return rows.filter(row => !isExpiryDue(row.expires_at, now)).length;
}

/**
 * The rows whose `column` (an expiry, RFC 3339 text) is absent or may be after `now`: the
 * database's narrowing by a text bound that holds for every offset; `isExpiryDue` decides.
 */
function notExpiredBy(column: string, now: Date): (query: Knex.QueryBuilder) => void {
  return live => {
    live.whereNull(column).orWhere(column, '>', liveExpiryTextBound(now));
  };
}
