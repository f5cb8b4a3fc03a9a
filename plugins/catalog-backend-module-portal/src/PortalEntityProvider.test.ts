/*
 * The provider's synchronisation logic against a portal served by a stub `fetch` (a test
 * double of the portal's REST API; the real portal and catalog run in packages/backend's
 * portalCatalog end-to-end test) and a recording catalog connection.
 */
import { mockServices } from '@backstage/backend-test-utils';
import type { EntityProviderMutation } from '@backstage/plugin-catalog-node';
import {
  PortalClient,
  type ApiProduct,
  type PortalEventPayload,
} from '@devportal/plugin-portal-common';
import { PortalEntityProvider } from './PortalEntityProvider';

const product = (name: string, publishStatus: 'Draft' | 'Published'): ApiProduct => ({
  apiVersion: 'devportal.kuadrant.io/v1alpha1',
  kind: 'APIProduct',
  metadata: {
    namespace: 'toystore',
    name,
    uid: name,
    resourceVersion: '1',
    creationTimestamp: '2026-01-01T00:00:00Z',
    annotations: { 'backstage.io/owner': 'group:default/payments-team' },
  },
  spec: {
    displayName: name,
    targetRef: {
      group: 'gateway.networking.k8s.io',
      kind: 'HTTPRoute',
      name: 'toystore',
    },
    approvalMode: 'manual',
    publishStatus,
  },
  status: { plans: [] },
});

const event = (type: PortalEventPayload['type'], name: string): PortalEventPayload => ({
  type,
  ref: { namespace: 'toystore', name },
  actor: 'user:default/bob',
  product: { namespace: 'toystore', name },
});

describe('PortalEntityProvider (stub portal, recording catalog connection)', () => {
  let products: Map<string, ApiProduct>;
  let failing: boolean;
  let mutations: EntityProviderMutation[];
  let provider: PortalEntityProvider;
  let logger: ReturnType<typeof mockServices.logger.mock>;

  const json = (status: number, body: unknown) =>
    new Response(JSON.stringify(body), {
      status,
      headers: { 'Content-Type': 'application/json' },
    });

  beforeEach(async () => {
    products = new Map();
    failing = false;
    mutations = [];
    logger = mockServices.logger.mock();
    const stubFetch = (async (input: string | URL | Request) => {
      const url = new URL(String(input));
      if (failing)
        return json(503, {
          error: { name: 'ServiceUnavailableError', message: 'down' },
        });
      const [, , namespace, name] = url.pathname.split('/');
      if (name === undefined) return json(200, { items: [...products.values()] });
      const found = products.get(`${namespace}/${name}`);
      return found
        ? json(200, found)
        : json(404, { error: { name: 'NotFoundError', message: 'gone' } });
    }) as typeof fetch;
    provider = PortalEntityProvider.create({
      client: new PortalClient({
        baseUrl: 'http://portal.test',
        fetch: stubFetch,
      }),
      logger,
      productUrlTemplate: '/portal/products/{namespace}/{name}',
    });
    await provider.connect({
      applyMutation: async mutation => {
        mutations.push(mutation);
      },
      refresh: async () => {},
    });
  });

  const put = (p: ApiProduct) => products.set(`${p.metadata.namespace}/${p.metadata.name}`, p);

  it('replaces its entities with those of the Published products on a full sync', async () => {
    put(product('toys', 'Published'));
    put(product('drafty', 'Draft'));
    await provider.refresh();
    expect(mutations).toHaveLength(1);
    const [full] = mutations;
    expect(full.type).toBe('full');
    expect(full.type === 'full' && full.entities.map(e => e.entity.metadata.name)).toEqual([
      'toystore.toys',
    ]);
  });

  it('adds a published product, and removes it once un-published or deleted', async () => {
    put(product('toys', 'Published'));
    await provider.onPortalEvent(event('apiproduct.created', 'toys'));
    await provider.drain();
    put(product('toys', 'Draft'));
    await provider.onPortalEvent(event('apiproduct.updated', 'toys'));
    await provider.drain();
    products.clear();
    await provider.onPortalEvent(event('apiproduct.deleted', 'toys'));
    await provider.drain();

    expect(
      mutations.map(m =>
        m.type === 'delta' ? [m.added.map(a => a.entity.metadata.name), m.removed] : m.type,
      ),
    ).toEqual([
      [['toystore.toys'], []],
      [
        [],
        [
          {
            entityRef: 'api:default/toystore.toys',
            locationKey: 'portal-api-products:toystore/toys',
          },
        ],
      ],
      [
        [],
        [
          {
            entityRef: 'api:default/toystore.toys',
            locationKey: 'portal-api-products:toystore/toys',
          },
        ],
      ],
    ]);
  });

  it('applies the state the portal has when the delta runs, not the one of the event', async () => {
    put(product('toys', 'Published'));
    await provider.onPortalEvent(event('apiproduct.created', 'toys'));
    products.clear(); // deleted before the queued delta reads it
    await provider.drain();
    expect(mutations).toEqual([expect.objectContaining({ type: 'delta', added: [] })]);
  });

  it('ignores key events and anything that is not a portal event', async () => {
    await provider.onPortalEvent(event('apikey.approved', 'toys'));
    await provider.onPortalEvent({ type: 'apiproduct.created' });
    await provider.onPortalEvent('nonsense');
    await provider.drain();
    expect(mutations).toEqual([]);
  });

  it('logs a delta that cannot read the portal and applies nothing', async () => {
    failing = true;
    await provider.onPortalEvent(event('apiproduct.created', 'toys'));
    await provider.drain();
    expect(mutations).toEqual([]);
    expect(logger.warn).toHaveBeenCalledWith(
      expect.stringContaining('Could not update the API entity of toystore/toys'),
    );
  });

  it('fails a full sync when the portal fails, leaving the entities as they were', async () => {
    failing = true;
    await expect(provider.refresh()).rejects.toThrow();
    expect(mutations).toEqual([]);
  });
});
