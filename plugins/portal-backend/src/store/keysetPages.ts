/*
 * Keyset pages of the database store: `limit + 1` rows of one index range in
 * (created_at, namespace, name) order, so a page costs the same at any position and table
 * size; the cursor is the last row's sort key (keysetCursor.ts).
 */
import type { Knex } from 'knex';
import { decodeKeysetCursor, encodeKeysetCursor, type KeysetPosition } from './keysetCursor';
import type { Page, PageRequest } from './types';

/** The position a page starts after, from its cursor (InputError for a foreign one). */
export function cursorPosition(page: PageRequest): KeysetPosition | undefined {
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
export function pageQuery<Q extends Knex.QueryBuilder>(
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
export function pageOf<R extends { created_at: string; namespace: string; name: string }, T>(
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
