/*
 * The product of each key in a list, for the columns that depend on it (contract mcp-access §8):
 * whether a key is an API key or an MCP access request, the MCP server it grants, and its plan's
 * quotas. Each product is read once per cache (one `GET /apiproducts/:ns/:name` however many of
 * its keys a page holds). A product that is gone or hidden (404) leaves its keys without one; any
 * other failure fails the page, as the list's own failure would.
 */
import {
  describeMcpTarget,
  isMcpTarget,
  type ApiKey,
  type ApiProduct,
} from '@devportal/plugin-portal-common';
import type { PortalApi } from '../../apis/PortalApi';
import { statusOf } from './errors';
import { refText } from './format';

/** Products already asked for, by `namespace/name`. */
export type ProductCache = Map<string, Promise<ApiProduct | undefined>>;

/** A table row of a key, with its product once known. */
export interface KeyWithProduct {
  id: string;
  key: ApiKey;
  /** Absent when the product is gone or hidden. */
  product?: ApiProduct;
}

function productOf(portal: PortalApi, key: ApiKey, cache: ProductCache) {
  const ref = { namespace: key.metadata.namespace, name: key.spec.apiProductRef.name };
  const id = refText(ref);
  let pending = cache.get(id);
  if (pending === undefined) {
    pending = portal.getApiProduct(ref).catch(error => {
      if (statusOf(error) === 404) return undefined;
      cache.delete(id);
      throw error;
    });
    cache.set(id, pending);
  }
  return pending;
}

/** `rows` with each key's product. */
export async function withProducts<Row extends { key: ApiKey }>(
  portal: PortalApi,
  rows: Row[],
  cache: ProductCache,
): Promise<Array<Row & { product?: ApiProduct }>> {
  const products = await Promise.all(rows.map(row => productOf(portal, row.key, cache)));
  return rows.map((row, i) => ({ ...row, product: products[i] }));
}

/** What a key is, by its product: `MCP access` (an MCP product's) or `API key`. */
export type KeyKind = 'API key' | 'MCP access';

/** The kind of a key of `product` (undefined while the product is unknown). */
export function keyKindOf(product: ApiProduct | undefined): KeyKind | undefined {
  if (product === undefined) return undefined;
  return isMcpTarget(product.spec.targetRef) ? 'MCP access' : 'API key';
}

/** `MCP server "example"` for a key of an MCP product; undefined otherwise. */
export function grantedTargetText(product: ApiProduct | undefined): string | undefined {
  const target = product?.spec.targetRef;
  return target !== undefined && isMcpTarget(target) ? describeMcpTarget(target) : undefined;
}
