/*
 * `limit` / `continue` of lists, driven by the real @kubernetes/client-node: pages in
 * etcd key order (bytes of namespace/name), selectors applied before paging, every page
 * from the snapshot of the first, the remaining count, and 410 Expired once the token's
 * revision is compacted away.
 */
import { FakeKubeApiServer, startFakeKubeApiServer } from './index';
import { apiKeys, clientsFor, mergePatch, statusOf } from './testClients';

const NAMES = ['a-b', 'a.b', 'a0', 'ab', 'A1', 'b', 'z-9'];

function apiKey(name: string, labels: Record<string, string>) {
  return {
    apiVersion: 'devportal.kuadrant.io/v1alpha1',
    kind: 'APIKey',
    metadata: { name: name.toLowerCase(), labels },
    spec: { plan: 'gold' },
  };
}

describe('fake kube-apiserver: list pages with limit and continue', () => {
  let fake: FakeKubeApiServer;
  let c: ReturnType<typeof clientsFor>;

  beforeEach(async () => {
    fake = await startFakeKubeApiServer({ namespaces: ['team-a', 'team-b'] });
    c = clientsFor(fake);
    for (const [index, name] of NAMES.entries()) {
      for (const namespace of ['team-a', 'team-b']) {
        await c.custom.createNamespacedCustomObject({
          ...apiKeys,
          namespace,
          body: apiKey(name, { parity: index % 2 === 0 ? 'even' : 'odd' }),
        });
      }
    }
  });
  afterEach(async () => {
    await fake.close();
  });

  /** Every page of a cluster-wide list, as namespace/name. */
  async function walk(limit: number, labelSelector?: string) {
    const pages: string[][] = [];
    let token: string | undefined;
    do {
      const list = (await c.custom.listClusterCustomObject({
        ...apiKeys,
        limit,
        labelSelector,
        _continue: token,
      })) as {
        items: Array<{ metadata: { namespace: string; name: string } }>;
        metadata: { continue?: string; remainingItemCount?: number };
      };
      pages.push(list.items.map(o => `${o.metadata.namespace}/${o.metadata.name}`));
      token = list.metadata.continue;
      if (token !== undefined) {
        expect(list.metadata.remainingItemCount).toBeGreaterThan(0);
      }
    } while (token !== undefined);
    return pages;
  }

  it('walks in byte order of namespace/name, every object once, continue only while more follow', async () => {
    const whole = (await walk(100)).flat();
    expect(whole).toHaveLength(14);
    const byteOrder = [...whole].sort((a, b) => Number(a > b) - Number(a < b));
    expect(whole).toEqual(byteOrder);
    for (const limit of [1, 3, 14]) {
      const pages = await walk(limit);
      expect(pages.flat()).toEqual(whole);
      expect(pages.every(page => page.length === limit || page === pages.at(-1))).toBe(true);
    }
  });

  it('applies label selectors before paging', async () => {
    const even = (await walk(100, 'parity=even')).flat();
    expect(even).toHaveLength(8);
    const pages = await walk(3, 'parity=even');
    expect(pages.map(page => page.length)).toEqual([3, 3, 2]);
    expect(pages.flat()).toEqual(even);
  });

  it('reports the remaining count with the continue token', async () => {
    const first = await c.custom.listNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      limit: 5,
    });
    expect(first.metadata.remainingItemCount).toBe(2);
    expect(typeof first.metadata.continue).toBe('string');
  });

  it('serves every page from the snapshot of the first: later creates, changes and deletes do not show', async () => {
    const first = await c.custom.listNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      limit: 2,
      labelSelector: 'parity=even',
    });
    expect(first.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual([
      'a-b',
      'a0',
    ]);
    // After the first page: a new even key, one even key deleted, one relabelled odd.
    await c.custom.createNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      body: apiKey('zz-new', { parity: 'even' }),
    });
    await c.custom.deleteNamespacedCustomObject({ ...apiKeys, namespace: 'team-a', name: 'a1' });
    await c.custom.patchNamespacedCustomObject(
      {
        ...apiKeys,
        namespace: 'team-a',
        name: 'z-9',
        body: { metadata: { labels: { parity: 'odd' } } },
      },
      mergePatch(),
    );
    const rest = await c.custom.listNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      limit: 10,
      labelSelector: 'parity=even',
      _continue: first.metadata.continue,
    });
    expect(rest.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual([
      'a1',
      'z-9',
    ]);
    expect(rest.items[1].metadata.labels).toEqual({ parity: 'even' });
    expect(rest.metadata.resourceVersion).toBe(first.metadata.resourceVersion);
    // A new list sees the present.
    const now = await c.custom.listNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      labelSelector: 'parity=even',
    });
    expect(now.items.map((o: { metadata: { name: string } }) => o.metadata.name)).toEqual([
      'a-b',
      'a0',
      'zz-new',
    ]);
  });

  it('answers 410 Expired for a token whose revision was compacted, 400 for a foreign one', async () => {
    const first = await c.custom.listClusterCustomObject({ ...apiKeys, limit: 2 });
    await c.custom.createNamespacedCustomObject({
      ...apiKeys,
      namespace: 'team-a',
      body: apiKey('later', {}),
    });
    fake.compactHistory();
    const expired = await statusOf(
      c.custom.listClusterCustomObject({
        ...apiKeys,
        limit: 2,
        _continue: first.metadata.continue,
      }),
    );
    expect(expired.code).toBe(410);
    expect(expired.body.reason).toBe('Expired');
    const foreign = await statusOf(
      c.custom.listClusterCustomObject({ ...apiKeys, limit: 2, _continue: 'not-a-token' }),
    );
    expect(foreign.code).toBe(400);
  });
});
