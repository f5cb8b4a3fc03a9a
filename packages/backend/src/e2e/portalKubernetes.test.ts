/*
 * The real development backend with `portal.storage: kubernetes`, pointed through a
 * kubeconfig file at the fake API server of @internal/fake-kube-apiserver (no cluster
 * runs here), with the toystore fixture loaded into the fake instead of manifest files.
 * Fixture users sign in through oauth2-proxy and the RBAC fixture policies apply.
 */
import path from 'node:path';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { portalCall, portalClient, uniqueName } from '../testing/portalHttp';

const NS = 'toystore';
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const DEVPORTAL = 'devportal.kuadrant.io/v1alpha1';
const GATEWAY_LABELS = { app: 'toystore', 'authorino.kuadrant.io/managed-by': 'authorino' };

describe('portal API end to end on Kubernetes storage (real backend, fake Kubernetes API server)', () => {
  let fake: FakeKubeApiServer;
  let backend: BackendProcess;
  const tokens: Record<string, string> = {};
  const clients: Record<string, PortalClient> = {};

  beforeAll(async () => {
    fake = await startFakeKubeApiServer({ namespaces: [NS] });
    await fake.loadFile(TOYSTORE);
    backend = await startBackendProcess({
      config: {
        mcpBroker: { servers: [] },
        portal: {
          storage: 'kubernetes',
          manifests: [],
          kubernetes: {
            kubeconfig: await fake.writeKubeConfigFile(),
            requestTimeout: { seconds: 2 },
          },
        },
      },
    });
    for (const user of ['alice', 'bob']) {
      tokens[user] = await backend.signIn(user);
      clients[user] = portalClient(backend, tokens[user]);
    }
  }, 120_000);

  afterAll(async () => {
    await backend?.stop();
    await fake?.close();
  }, 60_000);

  const refOf = (o: { metadata: ObjectRef }): ObjectRef => ({
    namespace: o.metadata.namespace,
    name: o.metadata.name,
  });

  it('runs the key flow on custom resources and Secrets', async () => {
    // Plans come from the PlanPolicy in the cluster.
    const product = await clients.bob.createApiProduct({
      metadata: {
        namespace: NS,
        name: uniqueName('k8s'),
        annotations: { 'backstage.io/owner': 'group:default/payments-team' },
      },
      spec: {
        displayName: 'Toystore',
        targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
        publishStatus: 'Published',
      },
    });
    expect(product.status?.plans.map(p => p.tier).sort()).toEqual(['bronze', 'gold', 'silver']);
    expect(fake.getObject(DEVPORTAL, 'APIProduct', NS, product.metadata.name)).toBeDefined();
    expect(
      (await clients.alice.listHttpRoutes({ namespace: NS })).items.map(r => r.metadata.name),
    ).toEqual(['toystore', 'toystore-admin']);

    const key = await clients.alice.createRequest({
      apiProductRef: refOf(product),
      planTier: 'gold',
    });
    const duplicate = await portalCall(backend, 'POST', '/requests', {
      token: tokens.alice,
      body: { apiProductRef: refOf(product), planTier: 'gold' },
    });
    expect(duplicate.status).toBe(409);

    // bob sees it through the ownership filter, which the store runs as label selectors.
    fake.clearRequestLog();
    const pending = await clients.bob.listRequests({ status: 'Pending', namespace: NS });
    expect(pending.items.map(k => k.metadata.name)).toEqual([key.metadata.name]);
    const keyLists = fake.requests({ verb: 'list', resource: 'apikeys' });
    expect(keyLists.length).toBeGreaterThan(0);
    expect(keyLists.every(r => (r.query.labelSelector ?? '') !== '')).toBe(true);

    await clients.bob.approveRequest(refOf(key), { reason: 'welcome' });
    const reads = await Promise.all(
      Array.from({ length: 10 }, () =>
        portalCall(backend, 'GET', `/apikeys/${NS}/${key.metadata.name}/secret`, {
          token: tokens.alice,
        }),
      ),
    );
    const revealed = reads.filter(r => r.status === 200);
    expect(revealed).toHaveLength(1);
    expect(reads.filter(r => r.status === 409)).toHaveLength(9);
    const secrets = fake
      .listObjects('v1', 'Secret', NS)
      .filter(s => s.metadata!.ownerReferences?.[0]?.uid === key.metadata.uid);
    expect(Buffer.from(secrets[0].data!.api_key, 'base64').toString()).toBe(
      revealed[0].body.apiKey,
    );
    // The labels the toystore AuthPolicy selects key Secrets by, and Authorino's own.
    expect(secrets[0].metadata!.labels).toMatchObject(GATEWAY_LABELS);

    // A bulk approval labels every Secret the same way, reading the route's AuthPolicies
    // once for the product, not once per key.
    const more = [];
    for (const planTier of ['silver', 'bronze', 'gold']) {
      more.push(await clients.alice.createRequest({ apiProductRef: refOf(product), planTier }));
    }
    fake.clearRequestLog();
    const bulk = await clients.bob.bulkApproveRequests({ requests: more.map(refOf) });
    expect(bulk.results.map(r => r.success)).toEqual([true, true, true]);
    expect(fake.requests({ verb: 'list', resource: 'authpolicies' })).toHaveLength(1);
    for (const second of more) {
      const bulkSecrets = fake
        .listObjects('v1', 'Secret', NS)
        .filter(s => s.metadata!.ownerReferences?.[0]?.uid === second.metadata.uid);
      expect(bulkSecrets).toHaveLength(1);
      expect(bulkSecrets[0].metadata!.labels).toMatchObject(GATEWAY_LABELS);
    }

    // Deleting the product takes its keys and their Secrets along.
    await clients.bob.deleteApiProduct(refOf(product));
    expect(fake.getObject(DEVPORTAL, 'APIKey', NS, key.metadata.name)).toBeUndefined();
    expect(fake.getObject('v1', 'Secret', NS, secrets[0].metadata!.name!)).toBeUndefined();
    expect(backend.output()).not.toContain(revealed[0].body.apiKey);
  }, 60_000);

  it('answers 503 for cluster failures and never blames the user for the cluster refusing the portal', async () => {
    // Every fault below lasts until removed: a one-shot fault could be used up by the catalog
    // module's background sync, which lists the same products.
    const failing = fake.failNext({ verb: 'list', resource: 'apiproducts' }, 500, {
      times: Infinity,
    });
    const failed = await portalCall(backend, 'GET', '/apiproducts', { token: tokens.alice });
    failing.remove();
    expect(failed.status).toBe(503);
    expect(failed.body.error.name).toBe('ServiceUnavailableError');

    const rule = fake.forbid({ verb: 'list', resource: 'apiproducts' });
    const refused = await portalCall(backend, 'GET', '/apiproducts', { token: tokens.alice });
    rule.remove();
    expect(refused.status).toBe(503);
    expect(refused.body.error.message).toContain('administrator');

    const hanging = fake.hangNext({ verb: 'list', resource: 'apiproducts' }, { times: Infinity });
    // Never answered: only the portal's request timeout can end it (the message names it).
    const hung = await portalCall(backend, 'GET', '/apiproducts', { token: tokens.alice });
    hanging.remove();
    expect(hung.status).toBe(503);
    expect(hung.body.error.message).toContain('within 2000 ms');

    expect((await portalCall(backend, 'GET', '/apiproducts', { token: tokens.alice })).status).toBe(
      200,
    );
  }, 30_000);
});
