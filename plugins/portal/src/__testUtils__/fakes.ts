/*
 * Test doubles for the component tests (jsdom cannot reach a backend: these tests render pages
 * against a fake portal API and a fake permission API; the browser tests in packages/backend run
 * the same pages against the real backend). Records are built in the API's exact shapes.
 */
import { ResponseError } from '@backstage/errors';
import type { Permission } from '@backstage/plugin-permission-common';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { mockApis } from '@backstage/frontend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import type { ApiKey, ApiProduct, ListPage, Plan } from '@devportal/plugin-portal-common';
import type { PortalApi } from '../apis/PortalApi';

/** A fake portal API: every method a jest mock that fails unless a test gives it an answer. */
export function fakePortalApi(
  overrides: { [K in keyof PortalApi]?: (...args: any[]) => any } = {},
): jest.Mocked<PortalApi> {
  const unexpected = (name: string) =>
    jest.fn(async () => {
      throw new Error(`unexpected call of PortalApi.${name}`);
    });
  const names: (keyof PortalApi)[] = [
    'listApiProducts',
    'listApiProductsPages',
    'getApiProduct',
    'createApiProduct',
    'updateApiProduct',
    'deleteApiProduct',
    'listHttpRoutes',
    'listHttpRoutesPages',
    'listPlanPolicies',
    'listPlanPoliciesPages',
    'getPlanPolicy',
    'listAuthPolicies',
    'listAuthPoliciesPages',
    'listRateLimitPolicies',
    'listRateLimitPoliciesPages',
    'listRequests',
    'listRequestsPages',
    'listMyRequests',
    'listMyRequestsPages',
    'createRequest',
    'updateRequest',
    'deleteRequest',
    'approveRequest',
    'rejectRequest',
    'bulkApproveRequests',
    'bulkRejectRequests',
    'revealApiKeySecret',
    'revokeRequest',
    'listMcpGrants',
    'listMcpGrantsPages',
    'getMcpGrant',
  ];
  const api = Object.fromEntries(names.map(name => [name, unexpected(name)])) as any;
  return Object.assign(api, overrides) as jest.Mocked<PortalApi>;
}

/** An async iterator over the given pages (the `...Pages` methods). */
export function pagesOf<T>(...pages: T[][]): AsyncIterableIterator<ListPage<T>> {
  async function* walk() {
    for (const [i, items] of pages.entries()) {
      yield { items, metadata: i < pages.length - 1 ? { continue: `page-${i + 1}` } : {} };
    }
  }
  return walk();
}

/** A one-page list answer. */
export function page<T>(items: T[], next?: string): ListPage<T> {
  return { items, metadata: next === undefined ? {} : { continue: next } };
}

/** A server refusal as PortalClient throws it: a ResponseError with the server's body. */
export async function serverError(status: number, message: string): Promise<ResponseError> {
  const names: Record<number, string> = {
    400: 'InputError',
    403: 'NotAllowedError',
    404: 'NotFoundError',
    409: 'ConflictError',
    503: 'ServiceUnavailableError',
  };
  const body = {
    error: { name: names[status] ?? 'Error', message },
    request: { method: 'GET', url: '/api/portal/x' },
    response: { statusCode: status },
  };
  return ResponseError.fromResponse(
    new Response(JSON.stringify(body), {
      status,
      statusText: names[status] ?? 'Error',
      headers: { 'Content-Type': 'application/json' },
    }) as any,
  );
}

/** A mocked API method whose every call fails with `error` (as a refused call does). */
export function rejecting(error: unknown): jest.Mock<Promise<never>, any[]> {
  return jest.fn(async () => {
    throw error;
  });
}

/** A permission API that allows exactly the named permissions (resource refs ignored). */
export function permissions(...allowed: Permission[]): ReturnType<typeof mockApis.permission> {
  const names = new Set(allowed.map(p => p.name));
  return mockApis.permission({
    authorize: request =>
      names.has(request.permission.name) ? AuthorizeResult.ALLOW : AuthorizeResult.DENY,
  });
}

let counter = 0;

/** An API product in the API's shape. */
export function product(overrides: {
  name: string;
  namespace?: string;
  displayName?: string;
  owner?: string;
  publishStatus?: 'Draft' | 'Published';
  approvalMode?: 'manual' | 'automatic';
  tags?: string[];
  plans?: Plan[];
  description?: string;
}): ApiProduct {
  counter += 1;
  return {
    apiVersion: 'devportal.kuadrant.io/v1alpha1',
    kind: 'APIProduct',
    metadata: {
      namespace: overrides.namespace ?? 'toystore',
      name: overrides.name,
      uid: `uid-product-${counter}`,
      resourceVersion: '1',
      creationTimestamp: '2026-03-01T10:00:00Z',
      annotations: { 'backstage.io/owner': overrides.owner ?? 'group:default/payments-team' },
    },
    spec: {
      displayName: overrides.displayName ?? `Product ${overrides.name}`,
      description: overrides.description,
      version: 'v1',
      targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
      approvalMode: overrides.approvalMode ?? 'manual',
      publishStatus: overrides.publishStatus ?? 'Published',
      tags: overrides.tags,
      documentation: { docsURL: 'https://docs.example.com/toystore' },
      contact: { team: 'payments-team', email: 'payments@example.com' },
    },
    status: {
      plans: overrides.plans ?? [
        { tier: 'gold', description: 'For production use', limits: { daily: 100000 } },
        { tier: 'bronze', description: 'To try things out', limits: { daily: 1000 } },
      ],
    },
  };
}

/**
 * `getApiProduct` over the given products; any other name reads as an HTTPRoute product of that
 * name (the pages read each listed key's product to tell API keys from MCP access).
 */
export function readsProducts(
  ...known: ApiProduct[]
): Pick<jest.Mocked<PortalApi>, 'getApiProduct'> {
  return {
    getApiProduct: jest.fn(
      async (ref: { namespace: string; name: string }) =>
        known.find(p => p.metadata.namespace === ref.namespace && p.metadata.name === ref.name) ??
        product({ namespace: ref.namespace, name: ref.name }),
    ),
  };
}

/** The plans of the contract's development fixture (mcp-access §9). */
export const EXAMPLE_MCP_PLANS: NonNullable<ApiProduct['spec']['plans']> = [
  {
    tier: 'bronze',
    description: 'To try things out',
    limits: { toolCalls: [{ calls: 5, per: 'day' }] },
  },
  {
    tier: 'gold',
    limits: {
      toolCalls: [
        { calls: 100, per: 'day' },
        { calls: 10, per: 'minute', tools: ['deploy*'] },
      ],
    },
  },
];

/** An API product on MCP server `server` (its `status.plans` the projection of its plans). */
export function mcpProduct(overrides: {
  name: string;
  server?: string;
  namespace?: string;
  displayName?: string;
  owner?: string;
  approvalMode?: 'manual' | 'automatic';
  publishStatus?: 'Draft' | 'Published';
  plans?: NonNullable<ApiProduct['spec']['plans']>;
}): ApiProduct {
  const base = product({ namespace: 'mcp', ...overrides });
  const plans = overrides.plans ?? EXAMPLE_MCP_PLANS;
  return {
    ...base,
    spec: {
      ...base.spec,
      targetRef: {
        group: 'mcp.devportal.io',
        kind: 'MCPServer',
        name: overrides.server ?? 'example',
      },
      plans,
      documentation: undefined,
    },
    status: { plans },
  };
}

/** The catalog entity the broker's catalog module makes of server `server` (contract §2.5). */
export function mcpServerEntity(server: string, owner = 'group:default/payments-team'): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'API',
    metadata: {
      namespace: 'default',
      name: `mcp-server-${server}`,
      title: `${server} MCP server`,
      annotations: { 'mcp.devportal.io/server': server },
    },
    spec: {
      type: 'mcp-server',
      lifecycle: 'production',
      owner,
      definition: JSON.stringify({
        server,
        kind: 'server',
        toolPrefix: `${server}_`,
        tools: [
          {
            name: 'echo',
            brokerName: `${server}_echo`,
            description: 'Echoes its input',
            annotations: { readOnlyHint: true },
          },
          {
            name: 'deploy',
            brokerName: `${server}_deploy`,
            description: 'Deploys a target',
            annotations: { readOnlyHint: false, destructiveHint: true },
          },
        ],
        prompts: [
          { name: 'greeting', brokerName: `${server}_greeting`, description: 'A greeting' },
        ],
        resources: [{ uri: `${server}://readme`, name: 'readme' }],
        resourceTemplates: [],
      }),
    },
  };
}

/** An API key in the API's shape. */
export function apiKey(overrides: {
  name: string;
  product: string;
  namespace?: string;
  phase?: 'Pending' | 'Approved' | 'Rejected';
  requester?: string;
  planTier?: string;
  useCase?: string;
  secretRevealed?: boolean;
  secretRevealedAt?: string;
  reason?: string;
  expiresAt?: string;
}): ApiKey {
  counter += 1;
  const phase = overrides.phase ?? 'Pending';
  return {
    apiVersion: 'devportal.kuadrant.io/v1alpha1',
    kind: 'APIKey',
    metadata: {
      namespace: overrides.namespace ?? 'toystore',
      name: overrides.name,
      uid: `uid-key-${counter}`,
      resourceVersion: '1',
      creationTimestamp: '2026-03-02T09:30:00Z',
    },
    spec: {
      apiProductRef: { name: overrides.product },
      planTier: overrides.planTier ?? 'gold',
      useCase: overrides.useCase,
      requestedBy: { userId: overrides.requester ?? 'user:default/alice' },
      expiresAt: overrides.expiresAt,
    },
    status: {
      phase,
      secretRevealed: overrides.secretRevealed ?? false,
      secretRevealedAt: overrides.secretRevealedAt,
      ...(phase !== 'Pending' && {
        reviewedBy: 'user:default/bob',
        reviewedAt: '2026-03-03T08:00:00Z',
        reason: overrides.reason,
      }),
    },
  };
}
