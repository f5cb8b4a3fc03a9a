/*
 * RBAC's conditional policies survive a plugin whose router comes up late (docs/deployment.md,
 * "Starting"). The RBAC plugin applies the conditional policy file while the backend starts and
 * reads each named plugin's permission metadata then; Backstage's root router already listens
 * and answers 404 for a plugin that has not registered its routes yet. RBAC 6.1.0 then skipped
 * that plugin's policies until the next restart (owners' approvals refused with 403: CI, on
 * PostgreSQL); the development backend's patch of RBAC waits for the metadata instead.
 *
 * The race is forced on every run, not left to timing: a preload (lateRouteRegistration.cjs)
 * holds the portal's routes back until its permission metadata has been asked for and answered
 * 404. Everything else is the real development backend with the real RBAC plugin.
 */
import path from 'node:path';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { createPublishedProduct, portalClient, uniqueName } from '../testing/portalHttp';

const NS = 'toystore';

describe('RBAC with a plugin whose routes register after RBAC first asks for its permission metadata', () => {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: [] } },
      nodeArgs: ['--require', path.join(__dirname, '../testing/lateRouteRegistration.cjs')],
      env: { LATE_ROUTE_PLUGIN: 'portal' },
    });
  }, 120_000);

  afterAll(async () => {
    await backend?.stop();
  }, 60_000);

  it("applies the portal's conditional policy: bob approves a key for his team's product", async () => {
    // The race happened: RBAC's first read was answered before the portal had routes.
    expect(backend.output()).toContain(
      'late-route: /api/portal registered after its permission metadata was asked for',
    );
    const [bob, alice] = await Promise.all([backend.signIn('bob'), backend.signIn('alice')]);

    const decision = await fetch(`${backend.baseUrl}/api/permission/authorize`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${bob}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        items: [
          {
            id: 'approve',
            permission: {
              type: 'resource',
              name: 'portal.apikey.approve',
              resourceType: 'portal-apikey',
              attributes: { action: 'update' },
            },
          },
        ],
      }),
    });
    expect(decision.status).toBe(200);
    expect((await decision.json()).items).toEqual([
      expect.objectContaining({ id: 'approve', result: 'CONDITIONAL' }),
    ]);

    // And the whole way through the portal: bob's team owns the product, so he may approve.
    const product = uniqueName('late-route');
    await createPublishedProduct(backend, bob, product, {
      owner: 'group:default/payments-team',
    });
    const key = await portalClient(backend, alice).createRequest({
      apiProductRef: { namespace: NS, name: product },
      planTier: 'gold',
    });
    const approved = await portalClient(backend, bob).approveRequest(key.metadata, {
      reason: 'late routes are fine',
    });
    expect(approved.status?.phase).toBe('Approved');
    expect(backend.output()).not.toMatch(/Could not apply the conditional policy/);
  }, 60_000);
});
