/*
 * The catalog module end to end (spec §10) on the real development backend: bob publishes,
 * un-publishes and deletes API products through the portal, and the catalog serves (or
 * stops serving) their API entities. The module's scheduled full sync is pushed an hour
 * away, so every change seen here travelled as a portal event (the delta path) — on the
 * database store (SQLite, and PostgreSQL when configured) and on the Kubernetes store
 * (the fake API server of @internal/fake-kube-apiserver). On Kubernetes a product that
 * exists before the backend starts shows the start-up full sync as well.
 */
import path from 'node:path';
import { startFakeKubeApiServer, type FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { backendDatabases } from '../testing/backendDatabases';
import { apiEntityOfProduct } from '../testing/catalogEntities';
import { STATIC_SERVICE_TOKEN, portalClient, uniqueName } from '../testing/portalHttp';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';

const NS = 'toystore';
const TEAM = 'group:default/payments-team';
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
/** Generous: the contract says 5 s; this only bounds how long a broken build hangs. */
const ENTITY_TIMEOUT_MS = 20_000;
/** A product in the cluster before the backend starts (Kubernetes only). */
const PRELOADED = 'preloaded-api';

/** The full sync once an hour; `initialDelay` decides whether it runs at start-up. */
const schedule = (initialDelay: { seconds: number } | { hours: number }) => ({
  catalog: {
    providers: {
      portal: {
        schedule: {
          frequency: { hours: 1 },
          timeout: { minutes: 1 },
          initialDelay,
        },
      },
    },
  },
});

interface Setup {
  name: string;
  start(): Promise<{ backend: BackendProcess; cleanup(): Promise<void> }>;
  preloaded: boolean;
}

const databaseSetups: Setup[] = backendDatabases('catalog module tests').map(db => ({
  name: `the database store on ${db.name}`,
  preloaded: false,
  async start() {
    const backend = await startBackendProcess({
      config: {
        mcpBroker: { servers: [] },
        ...schedule({ hours: 1 }),
        ...(db.config && { backend: { database: db.config } }),
      },
    });
    return {
      backend,
      cleanup: async () => {
        await backend.stop();
        await db.cleanup();
      },
    };
  },
}));

const kubernetesSetup: Setup = {
  name: 'the Kubernetes store (fake API server)',
  preloaded: true,
  async start() {
    const fake: FakeKubeApiServer = await startFakeKubeApiServer({
      namespaces: [NS],
    });
    await fake.loadFile(TOYSTORE);
    fake.load([
      {
        apiVersion: 'devportal.kuadrant.io/v1alpha1',
        kind: 'APIProduct',
        metadata: {
          namespace: NS,
          name: PRELOADED,
          annotations: { 'backstage.io/owner': TEAM },
        },
        spec: {
          displayName: 'Preloaded',
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: 'toystore',
          },
          approvalMode: 'manual',
          publishStatus: 'Published',
        },
      },
    ]);
    const backend = await startBackendProcess({
      config: {
        mcpBroker: { servers: [] },
        ...schedule({ seconds: 1 }),
        portal: {
          storage: 'kubernetes',
          manifests: [],
          kubernetes: { kubeconfig: await fake.writeKubeConfigFile() },
        },
      },
    });
    return {
      backend,
      cleanup: async () => {
        await backend.stop();
        await fake.close();
      },
    };
  },
};

describe.each([...databaseSetups, kubernetesSetup])(
  'API products as catalog API entities on $name (real backend and catalog)',
  setup => {
    let backend: BackendProcess;
    let cleanup: () => Promise<void>;
    let bob: PortalClient;

    beforeAll(async () => {
      ({ backend, cleanup } = await setup.start());
      bob = portalClient(backend, await backend.signIn('bob'));
    }, 120_000);

    afterAll(async () => {
      await cleanup?.();
    }, 60_000);

    const entityOf = (ref: ObjectRef) => apiEntityOfProduct(backend, STATIC_SERVICE_TOKEN, ref);
    const waitForEntity = async (ref: ObjectRef) =>
      (await waitFor(
        () => entityOf(ref),
        ENTITY_TIMEOUT_MS,
        `the API entity of ${ref.namespace}/${ref.name}`,
      ))!;
    const waitForNoEntity = (ref: ObjectRef) =>
      waitFor(
        async () => (await entityOf(ref)) === undefined,
        ENTITY_TIMEOUT_MS,
        `the API entity of ${ref.namespace}/${ref.name} to be gone`,
      );

    const createProduct = async (publishStatus: 'Draft' | 'Published') => {
      const product = await bob.createApiProduct({
        metadata: {
          namespace: NS,
          name: uniqueName('catalogued'),
          annotations: { 'backstage.io/owner': TEAM },
        },
        spec: {
          displayName: 'Catalogued API',
          description: 'Toys for the catalog',
          tags: ['Payments', 'public API'],
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: 'toystore',
          },
          documentation: { docsURL: 'https://docs.example.com/toys' },
          publishStatus,
        },
      });
      return { namespace: NS, name: product.metadata.name };
    };

    if (setup.preloaded) {
      it('serves the entity of a product that existed before start-up (full sync)', async () => {
        const entity = await waitForEntity({ namespace: NS, name: PRELOADED });
        expect(entity).toMatchObject({ kind: 'API', spec: { owner: TEAM } });
      }, 60_000);
    }

    it('serves the API entity of a product bob publishes, owned by payments-team', async () => {
      const ref = await createProduct('Published');
      const entity = await waitForEntity(ref);
      expect(entity).toMatchObject({
        kind: 'API',
        metadata: {
          name: `${NS}.${ref.name}`,
          title: 'Catalogued API',
          description: 'Toys for the catalog',
          tags: ['payments', 'public-api'],
          annotations: {
            'portal.devportal.io/api-product': `${NS}/${ref.name}`,
          },
        },
        spec: { type: 'other', lifecycle: 'production', owner: TEAM },
      });
      expect(entity.spec?.definition).toContain('Catalogued API');
      expect(entity.metadata.links?.map(link => link.url)).toEqual([
        `http://localhost:3000/portal/products/${NS}/${ref.name}`,
        'https://docs.example.com/toys',
      ]);
    }, 60_000);

    it('removes the entity when bob un-publishes the product, and brings it back', async () => {
      const ref = await createProduct('Published');
      await waitForEntity(ref);
      await bob.updateApiProduct(ref, { spec: { publishStatus: 'Draft' } });
      await waitForNoEntity(ref);
      await bob.updateApiProduct(ref, { spec: { publishStatus: 'Published' } });
      await waitForEntity(ref);
    }, 90_000);

    it('removes the entity when bob deletes the product', async () => {
      const ref = await createProduct('Published');
      await waitForEntity(ref);
      await bob.deleteApiProduct(ref);
      await waitForNoEntity(ref);
    }, 90_000);

    it('gives a Draft product no entity until it is published', async () => {
      const draft = await createProduct('Draft');
      // A product published after the draft was created: once its entity is served, the
      // draft's event (handled earlier, in order) has been handled too.
      const published = await createProduct('Published');
      await waitForEntity(published);
      expect(await entityOf(draft)).toBeUndefined();
      await bob.updateApiProduct(draft, {
        spec: { publishStatus: 'Published' },
      });
      await waitForEntity(draft);
    }, 90_000);
  },
);
