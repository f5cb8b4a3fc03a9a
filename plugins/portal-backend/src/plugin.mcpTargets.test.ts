/*
 * The portal's routes over MCP targets (contract mcp-access §3.3, §4.1, §4.8), in a test
 * backend with the real plugin, the real SQLite store and manifest files, and MOCKED auth,
 * user info and permissions (everyone allowed: these tests are about the answers, not the
 * decisions). MCP servers come from Backstage's in-memory catalog (`catalogServiceMock`, a test
 * double: the real catalog runs in packages/backend's end-to-end tests).
 */
import path from 'node:path';
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { MCP_SERVER_ANNOTATION } from '@devportal/plugin-portal-common';
import request from 'supertest';
import { portalPlugin } from './plugin';

const TOYSTORE_MANIFEST = path.resolve(__dirname, '..', '..', '..', 'examples', 'toystore.yaml');
const ALICE = 'user:default/alice';
const CAROL = 'user:default/carol';
const PAYMENTS = 'group:default/payments-team';

const EXAMPLE_SERVER: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'API',
  metadata: {
    namespace: 'default',
    name: 'mcp-server-example',
    annotations: { [MCP_SERVER_ANNOTATION]: 'example' },
  },
  spec: { type: 'mcp-server', lifecycle: 'production', owner: PAYMENTS, definition: '{}' },
};

const bronze = { tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } };
const gold = { tier: 'gold', limits: { toolCalls: [{ calls: 500, per: 'day' }] } };

async function startPortal() {
  const allow = async (requests: unknown[]) =>
    requests.map(() => ({ result: AuthorizeResult.ALLOW })) as any;
  const { server } = await startTestBackend({
    features: [
      portalPlugin,
      mockServices.rootConfig.factory({
        data: { portal: { manifests: [TOYSTORE_MANIFEST] } },
      }),
      mockServices.permissions.mock({ authorize: allow, authorizeConditional: allow }).factory,
      mockServices.userInfo.mock({
        getUserInfo: async (credentials: BackstageCredentials) => {
          const userEntityRef = (credentials.principal as { userEntityRef: string }).userEntityRef;
          return { userEntityRef, ownershipEntityRefs: [userEntityRef] };
        },
      }).factory,
      catalogServiceMock.factory({ entities: [EXAMPLE_SERVER] }),
    ],
  });
  const as = (user: string) => ({ Authorization: mockCredentials.user.header(user) });
  return {
    get: (p: string, user = CAROL) => request(server).get(`/api/portal${p}`).set(as(user)),
    post: (p: string, body: object, user = CAROL) =>
      request(server).post(`/api/portal${p}`).set(as(user)).send(body),
    patch: (p: string, body: object, user = CAROL) =>
      request(server)
        .patch(`/api/portal${p}`)
        .set(as(user))
        .set('Content-Type', 'application/merge-patch+json')
        .send(JSON.stringify(body)),
  };
}

describe('portal routes over MCP targets (real plugin and SQLite store; mocked auth and permissions)', () => {
  let api: Awaited<ReturnType<typeof startPortal>>;

  beforeEach(async () => {
    api = await startPortal();
    const created = [
      await api.post('/apiproducts', {
        metadata: { namespace: 'mcp', name: 'example-tools' },
        spec: {
          displayName: 'Example tools',
          targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
          approvalMode: 'automatic',
          publishStatus: 'Published',
          plans: [bronze, gold],
        },
      }),
      await api.post('/apiproducts', {
        metadata: { namespace: 'toystore', name: 'toys' },
        spec: {
          displayName: 'Toys',
          targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
          publishStatus: 'Published',
        },
      }),
    ];
    const failed = created.filter(response => response.status !== 201);
    if (failed.length > 0) {
      throw new Error(`setup: creating the products answered ${failed.map(r => r.status)}`);
    }
  }, 30_000);

  const productNames = (body: { items: Array<{ metadata: { name: string } }> }) =>
    body.items.map(item => item.metadata.name).sort();

  it('filters products by target kind and name, and refuses an unknown kind or a name without kind', async () => {
    const byTarget = await api.get('/apiproducts?targetKind=MCPServer&targetName=example');
    expect(byTarget.status).toBe(200);
    expect(productNames(byTarget.body)).toEqual(['example-tools']);
    expect(productNames((await api.get('/apiproducts?targetKind=HTTPRoute')).body)).toEqual([
      'toys',
    ]);
    expect(
      productNames((await api.get('/apiproducts?targetKind=MCPServer&targetName=other')).body),
    ).toEqual([]);
    const paged = await api.get('/apiproducts?targetKind=MCPServer&limit=1');
    expect(productNames(paged.body)).toEqual(['example-tools']);

    const unknownKind = await api.get('/apiproducts?targetKind=Gadget');
    expect(unknownKind.status).toBe(400);
    expect(unknownKind.body.error).toMatchObject({
      name: 'InputError',
      message: expect.stringContaining('targetKind: must be HTTPRoute, MCPServer or MCPEndpoint'),
    });
    const nameOnly = await api.get('/apiproducts?targetName=example');
    expect(nameOnly.status).toBe(400);
    expect(nameOnly.body.error.message).toContain(
      'targetName needs targetKind (HTTPRoute, MCPServer or MCPEndpoint)',
    );
  });

  it("gives an access request its product's target as spec.mcpTarget, and an API key none", async () => {
    const access = await api.post(
      '/requests',
      { apiProductRef: { namespace: 'mcp', name: 'example-tools' }, planTier: 'bronze' },
      ALICE,
    );
    expect(access.status).toBe(201);
    expect(access.body.spec.mcpTarget).toEqual({ kind: 'MCPServer', name: 'example' });
    const key = await api.post(
      '/requests',
      { apiProductRef: { namespace: 'toystore', name: 'toys' }, planTier: 'gold' },
      ALICE,
    );
    expect(key.status).toBe(201);
    expect(key.body.spec.mcpTarget).toBeUndefined();

    const sent = await api.post(
      '/requests',
      {
        apiProductRef: { namespace: 'mcp', name: 'example-tools' },
        planTier: 'gold',
        mcpTarget: { kind: 'MCPServer', name: 'other' },
      },
      ALICE,
    );
    expect(sent.status).toBe(400);
  });

  it('answers 409 naming the tier and the count for a patch that removes or renames a tier live grants use', async () => {
    for (let i = 0; i < 2; i++) {
      const granted = await api.post(
        '/requests',
        { apiProductRef: { namespace: 'mcp', name: 'example-tools' }, planTier: 'bronze' },
        `user:default/user-${i}`,
      );
      expect(granted.body.status.phase).toBe('Approved');
    }

    const removed = await api.patch('/apiproducts/mcp/example-tools', { spec: { plans: [gold] } });
    expect(removed.status).toBe(409);
    expect(removed.body.error).toMatchObject({
      name: 'ConflictError',
      message: 'plan "bronze" is used by 2 live access grants; revoke them or keep the plan',
    });
    const renamed = await api.patch('/apiproducts/mcp/example-tools', {
      spec: { plans: [{ ...bronze, tier: 'silver' }, gold] },
    });
    expect(renamed.status).toBe(409);
    expect(renamed.body.error.message).toContain('plan "bronze" is used by 2 live access grants');

    // A tier no live grant uses may go; a used one may change its limits.
    const kept = await api.patch('/apiproducts/mcp/example-tools', {
      spec: { plans: [{ ...bronze, limits: { toolCalls: [{ calls: 6, per: 'day' }] } }] },
    });
    expect(kept.status).toBe(200);
    expect(kept.body.spec.plans.map((plan: { tier: string }) => plan.tier)).toEqual(['bronze']);
    const grants = await api.get('/mcp/grants?targetKind=MCPServer&targetName=example');
    expect(grants.status).toBe(200);
    expect(
      grants.body.items.map((grant: { limits: { toolCalls: unknown[] } }) => grant.limits),
    ).toEqual([
      { toolCalls: [{ calls: 6, per: 'day' }] },
      { toolCalls: [{ calls: 6, per: 'day' }] },
    ]);
  });
});
