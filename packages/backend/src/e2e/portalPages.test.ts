/*
 * Pagination (spec §9) on the real development backend, fixture users signed in through
 * oauth2-proxy: page walks with the typed client's async iterators while other users
 * insert, the ownership scope paged, tokens refused for another caller, other filters or
 * an altered value — on SQLite, PostgreSQL (when configured) and Kubernetes storage (the
 * fake API server).
 */
import path from 'node:path';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { ApiKey, ListPage, ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { portalCall, portalClient, uniqueName } from '../testing/portalHttp';
import { backendDatabases } from '../testing/backendDatabases';

const NS = 'toystore';
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const TIERS = ['gold', 'silver', 'bronze'];
const PAYMENTS = 'group:default/payments-team';

type Storage =
  | { name: string; kind: 'database'; config?: Record<string, unknown>; cleanup(): Promise<void> }
  | { name: 'Kubernetes (fake API server)'; kind: 'kubernetes' };

const STORAGES: Storage[] = [
  ...backendDatabases('portal page walks').map(d => ({
    ...d,
    kind: 'database' as const,
  })),
  { name: 'Kubernetes (fake API server)', kind: 'kubernetes' },
];

const refText = (o: { metadata: ObjectRef }) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Every item of a page walk, checking that only the last page lacks `continue`. */
async function collect<T>(pages: AsyncIterable<ListPage<T>>): Promise<T[]> {
  const items: T[] = [];
  for await (const page of pages) {
    items.push(...page.items);
  }
  return items;
}

describe.each(STORAGES)('portal page walks on $name (real backend)', storage => {
  let fake: FakeKubeApiServer | undefined;
  let backend: BackendProcess;
  const tokens: Record<string, string> = {};
  const clients: Record<string, PortalClient> = {};
  const products: ObjectRef[] = [];

  beforeAll(async () => {
    let portal: Record<string, unknown> | undefined;
    if (storage.kind === 'kubernetes') {
      fake = await startFakeKubeApiServer({ namespaces: [NS] });
      await fake.loadFile(TOYSTORE);
      portal = {
        storage: 'kubernetes',
        manifests: [],
        kubernetes: { kubeconfig: await fake.writeKubeConfigFile() },
      };
    }
    backend = await startBackendProcess({
      config: {
        mcpBroker: { servers: [] },
        ...(storage.kind === 'database' &&
          storage.config && { backend: { database: storage.config } }),
        ...(portal && { portal }),
      },
    });
    for (const user of ['alice', 'bob', 'dave', 'carol']) {
      tokens[user] = await backend.signIn(user);
      clients[user] = portalClient(backend, tokens[user]);
    }
    // Four products of payments-team, three requests of alice on each: 12 Pending keys.
    for (let i = 0; i < 4; i++) {
      const product = await clients.bob.createApiProduct({
        metadata: {
          namespace: NS,
          name: uniqueName('pages'),
          annotations: { 'backstage.io/owner': PAYMENTS },
        },
        spec: {
          displayName: `Pages ${i}`,
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: 'toystore',
          },
          publishStatus: 'Published',
        },
      });
      products.push({ namespace: NS, name: product.metadata.name });
      for (const planTier of TIERS) {
        await clients.alice.createRequest({
          apiProductRef: { namespace: NS, name: product.metadata.name },
          planTier,
        });
      }
    }
  }, 180_000);

  afterAll(async () => {
    await backend?.stop();
    await fake?.close();
    if (storage.kind === 'database') await storage.cleanup();
  }, 60_000);

  it("walks the admin's Pending list while dave requests keys: nothing twice, nothing skipped", async () => {
    const before = (await clients.carol.listRequests({ status: 'Pending', namespace: NS })).items;
    expect(before.length).toBeGreaterThanOrEqual(12);
    const walked: ApiKey[] = [];
    let pages = 0;
    const shortPagesBeforeTheLast: number[] = [];
    for await (const page of clients.carol.listRequestsPages(
      { status: 'Pending', namespace: NS },
      { limit: 5 },
    )) {
      pages += 1;
      expect(page.items.length).toBeLessThanOrEqual(5);
      if (page.metadata.continue !== undefined) {
        if (page.items.length !== 5) shortPagesBeforeTheLast.push(pages);
        // Someone else requests a key between two pages.
        await clients.dave.createRequest({
          apiProductRef: products[pages % products.length],
          planTier: TIERS[Math.floor(pages / products.length) % TIERS.length],
        });
      }
      walked.push(...page.items);
    }
    expect(pages).toBeGreaterThanOrEqual(3);
    expect(shortPagesBeforeTheLast).toEqual([]);
    const refs = walked.map(refText);
    expect(new Set(refs).size).toBe(refs.length);
    expect(refs).toEqual(expect.arrayContaining(before.map(refText)));
    expect(walked.every(key => key.status?.phase === 'Pending')).toBe(true);
  });

  it('pages the ownership scope, "my requests" and the read-only kinds like their whole lists', async () => {
    const sorted = (items: Array<{ metadata: ObjectRef }>) => items.map(refText).sort();
    // bob sees requests for payments-team's products (group ownership), page by page.
    const bobsWhole = (await clients.bob.listRequests({ namespace: NS })).items;
    expect(bobsWhole.length).toBeGreaterThanOrEqual(12);
    expect(
      sorted(await collect(clients.bob.listRequestsPages({ namespace: NS }, { limit: 4 }))),
    ).toEqual(sorted(bobsWhole));
    const alicesWhole = (await clients.alice.listMyRequests()).items;
    expect(sorted(await collect(clients.alice.listMyRequestsPages({}, { limit: 5 })))).toEqual(
      sorted(alicesWhole),
    );
    const productsWhole = (await clients.alice.listApiProducts({ namespace: NS })).items;
    expect(
      sorted(await collect(clients.alice.listApiProductsPages({ namespace: NS }, { limit: 3 }))),
    ).toEqual(sorted(productsWhole));
    const routes = await clients.carol.listHttpRoutes({ limit: 1 });
    expect(routes.items).toHaveLength(1);
    expect(routes.metadata.continue).toBeDefined();
    expect(sorted(await collect(clients.carol.listHttpRoutesPages({}, { limit: 1 })))).toEqual([
      'toystore/toystore',
      'toystore/toystore-admin',
    ]);
  });

  it('refuses a token for another caller, other filters or altered, with a 400 that says so', async () => {
    const first = await clients.carol.listRequests({ namespace: NS, limit: 2 });
    const token = first.metadata.continue!;
    const get = (user: string, query: string) =>
      portalCall(backend, 'GET', `/requests?${query}`, { token: tokens[user] });
    const same = await get(
      'carol',
      `namespace=${NS}&limit=2&continue=${encodeURIComponent(token)}`,
    );
    expect(same.status).toBe(200);
    for (const [user, query] of [
      ['bob', `namespace=${NS}&limit=2&continue=${encodeURIComponent(token)}`],
      ['carol', `status=Pending&namespace=${NS}&limit=2&continue=${encodeURIComponent(token)}`],
      ['carol', `namespace=${NS}&limit=2&continue=${encodeURIComponent(`${token}A`)}`],
      ['carol', `namespace=${NS}&limit=0`],
    ]) {
      const refused = await get(user, query);
      expect({ user, query, status: refused.status }).toEqual({ user, query, status: 400 });
      expect(refused.body.error.name).toBe('InputError');
    }
  });
});
