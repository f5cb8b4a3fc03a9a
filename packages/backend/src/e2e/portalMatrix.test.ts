/*
 * Route × principal matrix of the portal API on the real development backend (real auth,
 * catalog, RBAC plugin with the fixture policies). Built from the plugin's route table:
 * the `matrix` object must have a row for every route (the type checker and the first
 * test both enforce it), so a new route cannot skip the matrix.
 *
 * Principals: none (no token), the static token (a service principal), erin (no portal
 * role), the record's owner, a non-owner who holds the `.own` permissions, and carol
 * (portal admin). Every cell prepares its own fresh records, so cells do not depend on
 * each other.
 */
import { portalRoutes, type PortalOperationId } from '@devportal/plugin-portal-backend';
import type { ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { STATIC_SERVICE_TOKEN, portalCall, portalClient, uniqueName } from '../testing/portalHttp';

const PRINCIPALS = ['none', 'service', 'erin', 'owner', 'nonOwner', 'admin'] as const;
type Principal = (typeof PRINCIPALS)[number];

interface Fixture {
  tokens: Record<string, string>;
  clients: Record<string, PortalClient>;
}

/** The request one cell sends. */
interface CellRequest {
  path: string;
  body?: unknown;
}

interface MatrixRow {
  /** The fixture users acting as "owner" and "non-owner with .own" for this route. */
  users: { owner: string; nonOwner: string };
  expected: Record<Principal, number>;
  /** Prepares fresh records for one cell and returns its request. */
  prepare(fixture: Fixture): Promise<CellRequest>;
}

const NS = 'toystore';

/** A Published, manual product on the toystore route, owned by its creator. */
async function product(client: PortalClient, options: { owner?: string } = {}): Promise<ObjectRef> {
  const name = uniqueName('mx');
  await client.createApiProduct({
    metadata: {
      namespace: NS,
      name,
      ...(options.owner !== undefined && {
        annotations: { 'backstage.io/owner': options.owner },
      }),
    },
    spec: {
      displayName: `Matrix ${name}`,
      targetRef: {
        group: 'gateway.networking.k8s.io',
        kind: 'HTTPRoute',
        name: 'toystore',
      },
      publishStatus: 'Published',
    },
  });
  return { namespace: NS, name };
}

/** A Pending key requested by alice for a fresh product owned by bob. */
async function pendingKey(fixture: Fixture): Promise<ObjectRef> {
  const productRef = await product(fixture.clients.bob);
  const key = await fixture.clients.alice.createRequest({
    apiProductRef: productRef,
    planTier: 'gold',
  });
  return { namespace: key.metadata.namespace, name: key.metadata.name };
}

const keyPath = (ref: ObjectRef) => `${ref.namespace}/${ref.name}`;

// Product routes act on products bob owns personally (owner user:default/bob); dave is in
// payments-team with the api-owner role (`.own` permissions) but does not own them.
// Key routes act on keys alice requested for bob's products: alice is the requester,
// bob the product owner; dave holds `apikey.*.own` but owns neither.
const productUsers = { owner: 'bob', nonOwner: 'dave' };
const requesterUsers = { owner: 'alice', nonOwner: 'dave' };
const reviewerUsers = { owner: 'bob', nonOwner: 'dave' };

const readOnlyList = (path: string): MatrixRow => ({
  users: productUsers,
  expected: {
    none: 401,
    service: 200,
    erin: 403,
    owner: 200,
    nonOwner: 200,
    admin: 200,
  },
  prepare: async () => ({ path }),
});

const ownerOnlyList = (path: string): MatrixRow => ({
  // alice has no role granting the auth/rate-limit policy lists.
  users: { owner: 'bob', nonOwner: 'alice' },
  expected: {
    none: 401,
    service: 200,
    erin: 403,
    owner: 200,
    nonOwner: 403,
    admin: 200,
  },
  prepare: async () => ({ path }),
});

/** Removing a key (DELETE by its requester, revoke by its product's owner): 204 or hidden. */
const keyRemovalExpected: MatrixRow['expected'] = {
  none: 401,
  service: 403,
  erin: 403,
  owner: 204,
  nonOwner: 404,
  admin: 204,
};

const review = (action: 'approve' | 'reject'): MatrixRow => ({
  users: reviewerUsers,
  // dave's conditional approval does not hold for bob's product and he cannot read the key.
  expected: {
    none: 401,
    service: 403,
    erin: 403,
    owner: 200,
    nonOwner: 404,
    admin: 200,
  },
  prepare: async fixture => ({
    path: `/requests/${keyPath(await pendingKey(fixture))}/${action}`,
    body: { reason: 'matrix' },
  }),
});

const bulk = (action: 'approve' | 'reject'): MatrixRow => ({
  users: reviewerUsers,
  // The call succeeds for anyone who may review at all; items are decided one by one.
  expected: {
    none: 401,
    service: 403,
    erin: 403,
    owner: 200,
    nonOwner: 200,
    admin: 200,
  },
  prepare: async fixture => ({
    path: `/requests/bulk-${action}`,
    body: { requests: [await pendingKey(fixture)] },
  }),
});

/** The MCP access grant routes: the broker's portal module (a service) and admins only. */
const grantRoute = (adminStatus: number, prepare: MatrixRow['prepare']): MatrixRow => ({
  users: { owner: 'bob', nonOwner: 'alice' },
  expected: {
    none: 401,
    service: adminStatus,
    erin: 403,
    owner: 403,
    nonOwner: 403,
    admin: adminStatus,
  },
  prepare,
});

const matrix: Record<PortalOperationId, MatrixRow> = {
  listApiProducts: readOnlyList('/apiproducts'),
  getApiProduct: {
    users: productUsers,
    expected: {
      none: 401,
      service: 200,
      erin: 403,
      owner: 200,
      nonOwner: 200,
      admin: 200,
    },
    prepare: async f => ({
      path: `/apiproducts/${keyPath(await product(f.clients.bob))}`,
    }),
  },
  createApiProduct: {
    users: { owner: 'bob', nonOwner: 'alice' },
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 201,
      nonOwner: 403,
      admin: 201,
    },
    prepare: async () => ({
      path: '/apiproducts',
      body: {
        metadata: { namespace: NS, name: uniqueName('mx-new') },
        spec: {
          displayName: 'Created by the matrix',
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: 'toystore',
          },
        },
      },
    }),
  },
  updateApiProduct: {
    users: productUsers,
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 200,
      nonOwner: 403,
      admin: 200,
    },
    prepare: async f => ({
      path: `/apiproducts/${keyPath(await product(f.clients.bob))}`,
      body: { spec: { description: 'patched by the matrix' } },
    }),
  },
  deleteApiProduct: {
    users: productUsers,
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 204,
      nonOwner: 403,
      admin: 204,
    },
    prepare: async f => ({
      path: `/apiproducts/${keyPath(await product(f.clients.bob))}`,
    }),
  },
  listHttpRoutes: readOnlyList('/httproutes'),
  listPlanPolicies: readOnlyList('/planpolicies'),
  listMcpGrants: grantRoute(200, async () => ({ path: '/mcp/grants?limit=10' })),
  // A Pending key is no grant: 404 for whoever may read grants, 403 for everyone else.
  getMcpGrant: grantRoute(404, async fixture => ({
    path: `/mcp/grants/${keyPath(await pendingKey(fixture))}`,
  })),
  getPlanPolicy: readOnlyList('/planpolicies/toystore/toystore-plans'),
  listAuthPolicies: ownerOnlyList('/authpolicies'),
  listRateLimitPolicies: ownerOnlyList('/ratelimitpolicies'),
  listRequests: {
    users: requesterUsers,
    expected: {
      none: 401,
      service: 200,
      erin: 403,
      owner: 200,
      nonOwner: 200,
      admin: 200,
    },
    prepare: async () => ({ path: '/requests?status=Pending' }),
  },
  listMyRequests: {
    users: requesterUsers,
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 200,
      nonOwner: 200,
      admin: 200,
    },
    prepare: async () => ({ path: '/requests/my' }),
  },
  createRequest: {
    users: requesterUsers,
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 201,
      nonOwner: 201,
      admin: 201,
    },
    prepare: async f => ({
      path: '/requests',
      body: { apiProductRef: await product(f.clients.bob), planTier: 'silver' },
    }),
  },
  bulkApproveRequests: bulk('approve'),
  bulkRejectRequests: bulk('reject'),
  updateRequest: {
    users: requesterUsers,
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 200,
      nonOwner: 404,
      admin: 200,
    },
    prepare: async f => ({
      path: `/requests/${keyPath(await pendingKey(f))}`,
      body: { useCase: 'edited by the matrix' },
    }),
  },
  deleteRequest: {
    users: requesterUsers,
    expected: keyRemovalExpected,
    prepare: async f => ({ path: `/requests/${keyPath(await pendingKey(f))}` }),
  },
  approveRequest: review('approve'),
  rejectRequest: review('reject'),
  revokeRequest: {
    users: reviewerUsers,
    // Owners revoke under their conditional approval, carol under apikey.delete.all; dave's
    // approval does not hold for bob's product and he cannot read the key: as for DELETE.
    expected: keyRemovalExpected,
    prepare: async f => {
      const ref = await pendingKey(f);
      await f.clients.carol.approveRequest(ref);
      return { path: `/requests/${keyPath(ref)}/revoke`, body: { reason: 'matrix' } };
    },
  },
  revealApiKeySecret: {
    users: requesterUsers,
    // carol holds apikey.read.all, which covers any key (spec §3: `.all` ⇒ any record).
    expected: {
      none: 401,
      service: 403,
      erin: 403,
      owner: 200,
      nonOwner: 404,
      admin: 200,
    },
    prepare: async f => {
      const ref = await pendingKey(f);
      await f.clients.carol.approveRequest(ref);
      return { path: `/apikeys/${keyPath(ref)}/secret` };
    },
  },
};

describe('portal API route × principal matrix (real backend, RBAC fixture policies)', () => {
  let backend: BackendProcess;
  const fixture: Fixture = { tokens: {}, clients: {} };

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: [] } },
    });
    for (const user of ['alice', 'bob', 'dave', 'carol', 'erin']) {
      fixture.tokens[user] = await backend.signIn(user);
      fixture.clients[user] = portalClient(backend, fixture.tokens[user]);
    }
  }, 120_000);

  afterAll(async () => {
    await backend?.stop();
  });

  it('has a row for every route of the route table, and no other', () => {
    expect(Object.keys(matrix).sort()).toEqual(portalRoutes.map(r => r.operationId).sort());
  });

  function tokenOf(row: MatrixRow, principal: Principal): string | undefined {
    switch (principal) {
      case 'none':
        return undefined;
      case 'service':
        return STATIC_SERVICE_TOKEN;
      case 'erin':
        return fixture.tokens.erin;
      case 'owner':
        return fixture.tokens[row.users.owner];
      case 'nonOwner':
        return fixture.tokens[row.users.nonOwner];
      default:
        return fixture.tokens.carol;
    }
  }

  describe.each(
    portalRoutes.map(route => [`${route.method.toUpperCase()} ${route.path}`, route] as const),
  )('%s', (_title, route) => {
    const row = matrix[route.operationId];
    it.each(PRINCIPALS.map(principal => [principal, row.expected[principal]] as const))(
      'answers %s with %i',
      async (principal, expectedStatus) => {
        const request = await row.prepare(fixture);
        const response = await portalCall(backend, route.method.toUpperCase(), request.path, {
          token: tokenOf(row, principal),
          body: request.body,
        });
        const detail = `${route.method.toUpperCase()} ${request.path} as ${principal}: ${JSON.stringify(response.body)}`;
        expect({ status: response.status, detail }).toEqual({
          status: expectedStatus,
          detail,
        });
        if (response.status < 400) return;
        // Backstage's error body, from @backstage/errors.
        expect(response.body).toMatchObject({
          error: { name: expect.any(String), message: expect.any(String) },
          response: { statusCode: expectedStatus },
        });
      },
      30_000,
    );
  });
});
