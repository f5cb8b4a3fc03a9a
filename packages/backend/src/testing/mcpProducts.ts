/*
 * The portal calls that make an MCP server a product and ask for access to it (contract
 * mcp-access §3, §4), for end-to-end tests and the benchmark (bench/mcp-access.mjs) on the real
 * backend: raw answers, so that callers assert the status they expect.
 */
import { portalCall, type PortalResponse } from './portalHttp';
import type { BackendProcess } from './startBackendProcess';

/** One plan of an MCP product: `calls` tool calls per `per`. */
export interface McpPlan {
  tier: string;
  calls: number;
  per: 'minute' | 'hour' | 'day';
}

/** Options of {@link createMcpProduct}. */
export interface McpProductOptions {
  namespace: string;
  name: string;
  displayName: string;
  /** The broker's server the product offers. */
  server: string;
  plans: readonly McpPlan[];
}

/** POSTs a Published API product on broker server `server`, as `token`'s user. */
export function createMcpProduct(
  backend: BackendProcess,
  token: string,
  options: McpProductOptions,
): Promise<PortalResponse> {
  return portalCall(backend, 'POST', '/apiproducts', {
    token,
    body: {
      metadata: { namespace: options.namespace, name: options.name },
      spec: {
        displayName: options.displayName,
        targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: options.server },
        plans: options.plans.map(({ tier, calls, per }) => ({
          tier,
          limits: { toolCalls: [{ calls, per }] },
        })),
        publishStatus: 'Published',
      },
    },
  });
}

/** POSTs `token`'s user's request for `tier` of product `namespace/name`. */
export function requestAccess(
  backend: BackendProcess,
  token: string,
  product: { namespace: string; name: string },
  tier: string,
): Promise<PortalResponse> {
  return portalCall(backend, 'POST', '/requests', {
    token,
    body: { apiProductRef: product, planTier: tier },
  });
}

/** POSTs `approve`, `reject` or `revoke` of request `key` with `reason`, as `token`'s user. */
export function decideRequest(
  backend: BackendProcess,
  token: string,
  key: { namespace: string; name: string },
  decision: 'approve' | 'reject' | 'revoke',
  reason: string,
): Promise<PortalResponse> {
  return portalCall(backend, 'POST', `/requests/${key.namespace}/${key.name}/${decision}`, {
    token,
    body: { reason },
  });
}
