/*
 * RBAC's conditional policies survive a plugin whose routes are mounted late (docs/deployment.md,
 * "Starting"). The RBAC plugin applies the conditional policy file while the backend starts and
 * reads each named plugin's permission metadata then, once; Backstage's root router already
 * listens and answers 404 for a plugin that has not mounted its routes yet, and RBAC 6.1.0, as
 * published, then skips that plugin's policies until the next restart (owners' approvals refused
 * with 403: CI, on PostgreSQL). The development backend runs RBAC as published, with a module of
 * the permission plugin (@devportal/plugin-permission-backend-module-await-plugins) that starts RBAC only once
 * the named plugins are up (routes mounted, init finished).
 *
 * The race is forced on every run, not left to timing: a preload (lateRouteRegistration.cjs)
 * holds the portal's routes back until a first request for the portal has been answered 404.
 * Without the module that request is RBAC's metadata read, and bob's decision is DENY (checked by
 * removing the module from src/index.ts). Everything else is the real development backend with
 * the real RBAC plugin.
 */
import fs from 'node:fs';
import path from 'node:path';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { createPublishedProduct, portalClient, uniqueName } from '../testing/portalHttp';

const NS = 'toystore';

describe('RBAC as published with a plugin whose routes are mounted after a first request for it got 404', () => {
  let backend: BackendProcess;

  beforeAll(async () => {
    backend = await startBackendProcess({
      config: { mcpBroker: { servers: [] } },
      nodeArgs: ['--require', path.join(__dirname, '../testing/lateRouteRegistration.cjs')],
      env: { LATE_ROUTE_PLUGIN: 'portal' },
      startTimeoutMs: 280_000,
    });
  }, 320_000);

  afterAll(async () => {
    await backend?.stop();
  }, 60_000);

  it("applies the portal's conditional policy: bob approves a key for his team's product", async () => {
    // The race happened: RBAC's first read was answered before the portal had routes.
    expect(backend.output()).toMatch(
      /late-route: \/api\/portal registered after \S+ was answered 404/,
    );
    // RBAC's start-up is as published: its metadata read is the one of 6.1.0 (the patch in
    // .yarn/patches keeps only its database-outage part, docs/deployment.md).
    const metadataReader = fs.readFileSync(
      require.resolve('@backstage-community/plugin-rbac-backend/dist/service/plugin-endpoints.cjs.js'),
      'utf8',
    );
    expect(metadataReader).not.toMatch(/devportal patch/);
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
    expect(backend.output()).not.toMatch(
      /No permission metadata found for|Failed to retrieve permission metadata/,
    );
  }, 60_000);
});
