/*
 * The broker's access grant of a portal grant (docs/contracts/mcp-access.md §5.2): the grant's
 * id is the access request's uid (never reused, so a removed grant stays removed), its group the
 * product (`<namespace>/<name>`, replaced whole when the product changes), and each tool-call
 * quota of the plan a budget of a fixed window.
 */
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';
import type { McpGrant } from '@devportal/plugin-portal-common';

/** Milliseconds of each quota window a plan may name. */
const WINDOW_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;

/** Where a person manages their access in the portal's frontend. */
export const MANAGE_PATH = '/portal/keys';

/** The group of a product's grants: `<namespace>/<name>`. */
export function productGroup(product: { namespace: string; name: string }): string {
  return `${product.namespace}/${product.name}`;
}

/** The broker's grant for the portal's `grant`; see the file comment. @public */
export function accessGrantOf(grant: McpGrant): McpAccessGrant {
  return {
    id: grant.key.uid,
    group: productGroup(grant.product),
    subject: grant.subject,
    target: {
      kind: grant.target.kind === 'MCPServer' ? 'server' : 'endpoint',
      name: grant.target.name,
    },
    title: grant.product.displayName,
    plan: grant.tier,
    limits: grant.limits.toolCalls.map(limit => ({
      calls: limit.calls,
      windowMs: WINDOW_MS[limit.per],
      ...(limit.tools !== undefined && { tools: limit.tools }),
    })),
    approvedAt: Date.parse(grant.approvedAt),
    ...(grant.expiresAt !== undefined && { expiresAt: Date.parse(grant.expiresAt) }),
    links: { manage: MANAGE_PATH },
  };
}
