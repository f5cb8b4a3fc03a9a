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

/** {@link createMcpProduct}, throwing unless the portal answers 201. */
export async function createdMcpProduct(
  backend: BackendProcess,
  token: string,
  options: McpProductOptions,
): Promise<void> {
  const created = await createMcpProduct(backend, token, options);
  if (created.status !== 201) {
    throw new Error(
      `creating MCP product ${options.name} answered ${created.status}: ${JSON.stringify(created.body)}`,
    );
  }
}

/** Optional fields of a request (P§4). */
export interface AccessRequestExtras {
  /** RFC 3339; the grant ends then. */
  expiresAt?: string;
}

/** POSTs `token`'s user's request for `tier` of product `namespace/name`. */
export function requestAccess(
  backend: BackendProcess,
  token: string,
  product: { namespace: string; name: string },
  tier: string,
  extras: AccessRequestExtras = {},
): Promise<PortalResponse> {
  return portalCall(backend, 'POST', '/requests', {
    token,
    body: { apiProductRef: product, planTier: tier, ...extras },
  });
}

/**
 * {@link requestAccess}, throwing unless the portal answers 201: the request's namespace and
 * name, and the answer's body (its phase).
 */
export async function requestedAccess(
  backend: BackendProcess,
  token: string,
  product: { namespace: string; name: string },
  tier: string,
  extras: AccessRequestExtras = {},
): Promise<{ key: { namespace: string; name: string }; body: any }> {
  const requested = await requestAccess(backend, token, product, tier, extras);
  if (requested.status !== 201) {
    throw new Error(
      `requesting ${tier} of ${product.namespace}/${product.name} answered ${requested.status}: ${JSON.stringify(requested.body)}`,
    );
  }
  const { namespace, name } = requested.body.metadata as { namespace: string; name: string };
  return { key: { namespace, name }, body: requested.body };
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
