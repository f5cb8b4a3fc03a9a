/*
 * The API products on MCP servers and endpoints the person may see: by target for the MCP tools
 * page ("Request access" per server), and one target's for a server's entity card. Each asks the
 * portal for what it shows, with the product list's `targetKind` / `targetName` filter (the
 * store filters; pages are walked to the end), so a card reads one server's products, not every
 * product. Drafts come back only to their owners (the server decides); callers that offer
 * access keep the Published.
 */
import { useApi } from '@backstage/frontend-plugin-api';
import {
  isMcpTarget,
  mcpTargetKey,
  type ApiProduct,
  type McpTarget,
} from '@devportal/plugin-portal-common';
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

/** Reads the products on targets of `kind`, by target; `reload()` reads them again. */
export function useMcpProducts(kind: McpTarget['kind']): AsyncData<McpProductsByTarget> {
  const portal = useApi(portalApiRef);
  return useAsyncData(
    () => mcpProductsByTarget(portal.listApiProductsPages({ targetKind: kind })),
    [portal, kind],
  );
}

/** Reads the products on `target` alone (the portal filters by the exact target). */
export function useMcpTargetProducts(target: McpTarget): AsyncData<ApiProduct[]> {
  const portal = useApi(portalApiRef);
  const { kind, name } = target;
  return useAsyncData(async () => {
    const pages = portal.listApiProductsPages({ targetKind: kind, targetName: name });
    return (await mcpProductsByTarget(pages)).get(mcpTargetKey({ kind, name })) ?? [];
  }, [portal, kind, name]);
}

/** Whether people may request access to a product now (Published). */
export function isRequestable(product: ApiProduct): boolean {
  return product.spec.publishStatus === 'Published';
}
