/*
 * The API products on MCP servers and endpoints the person may see, by target: what the MCP
 * tools page offers "Request access" through and what a server's entity card lists. The product
 * list is walked page by page and matched here by each product's `spec.targetRef`, so the pages
 * work against a portal backend without the `targetKind`/`targetName` list filter. Drafts come
 * back only to their owners (the server decides); callers that offer access keep the Published.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import { isMcpTarget, mcpTargetKey, type ApiProduct } from '@devportal/plugin-portal-common';
import { portalApiRef } from '../apis/PortalApi';
import { useAsyncData, type AsyncData } from './useAsyncData';

/** MCP products by `mcpTargetKey` of their target (`MCPServer/example`). */
export type McpProductsByTarget = ReadonlyMap<string, ApiProduct[]>;

/** The MCP products on every page of `pages`, by target. */
export async function mcpProductsByTarget(
  pages: AsyncIterable<{ items: ApiProduct[] }>,
): Promise<McpProductsByTarget> {
  const byTarget = new Map<string, ApiProduct[]>();
  for await (const page of pages) {
    for (const product of page.items) {
      const target = product.spec.targetRef;
      if (!isMcpTarget(target)) continue;
      const key = mcpTargetKey(target);
      byTarget.set(key, [...(byTarget.get(key) ?? []), product]);
    }
  }
  return byTarget;
}

/** Reads the MCP products by target; `reload()` reads them again. */
export function useMcpProducts(): AsyncData<McpProductsByTarget> {
  const portal = useApi(portalApiRef);
  return useAsyncData(() => mcpProductsByTarget(portal.listApiProductsPages()), [portal]);
}

/** Whether people may request access to a product now (Published). */
export function isRequestable(product: ApiProduct): boolean {
  return product.spec.publishStatus === 'Published';
}
