/*
 * The portal's notifications end to end (spec §11) on the real development backend with
 * the real notifications and signals backends: the notifications backend resolves the
 * product's owner group (payments-team → bob, dave) through the catalog, and each user
 * reads their own notifications through `/api/notifications/notifications`. On both stores:
 * the database store on SQLite (and PostgreSQL) and the Kubernetes store on the fake API server
 * of @internal/fake-kube-apiserver.
 */
import path from 'node:path';
import type { ObjectRef, PortalClient } from '@devportal/plugin-portal-common';
import { startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import { backendDatabases } from '../testing/backendDatabases';
import { notificationsOf } from '../testing/notifications';
import { portalClient, uniqueName } from '../testing/portalHttp';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';

const NS = 'toystore';
const USERS = ['alice', 'bob', 'dave'];
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');

/** Where the portal keeps its records: the backend config for it, and what to clean up. */
interface StoreSetup {
  name: string;
  start(): Promise<{ config: Record<string, unknown>; cleanup(): Promise<void> }>;
}

const storeSetups: StoreSetup[] = [
  ...backendDatabases('portal notification tests').map(db => ({
    name: `the database store on ${db.name}`,
    start: async () => ({
      config: db.config ? { backend: { database: db.config } } : {},
      cleanup: db.cleanup,
    }),
  })),
  {
    name: 'the Kubernetes store (fake API server)',
    async start() {
      const fake = await startFakeKubeApiServer({ namespaces: [NS] });
      await fake.loadFile(TOYSTORE);
      return {
        config: {
          portal: {
            storage: 'kubernetes',
            manifests: [],
            kubernetes: { kubeconfig: await fake.writeKubeConfigFile() },
          },
        },
        cleanup: () => fake.close(),
      };
    },
  },
];

describe.each(storeSetups)(
  'portal notifications end to end on $name (real notifications backend)',
  setup => {
    let backend: BackendProcess;
    let cleanup: () => Promise<void> = async () => {};
    const tokens: Record<string, string> = {};
    const clients: Record<string, PortalClient> = {};

    beforeAll(async () => {
      const store = await setup.start();
      cleanup = store.cleanup;
      backend = await startBackendProcess({
        config: { mcpBroker: { servers: [] }, ...store.config },
      });
      for (const user of USERS) {
        tokens[user] = await backend.signIn(user);
        clients[user] = portalClient(backend, tokens[user]);
      }
    }, 120_000);

    afterAll(async () => {
      await backend?.stop();
      await cleanup();
    }, 60_000);

    /** The newest notification of `user` on `topic`, once there is one. */
    const firstNotification = async (user: string, topic: string) =>
      (await waitFor(
        async () => (await notificationsOf(backend, tokens[user], topic))[0],
        10_000,
        `a notification to ${user} on ${topic}`,
      ))!;

    /** A Published product of payments-team; `toystore-admin` has no plans, so any tier goes. */
    const createProduct = async (route: 'toystore' | 'toystore-admin') => {
      const product = await clients.bob.createApiProduct({
        metadata: {
          namespace: NS,
          name: uniqueName('notified'),
          annotations: { 'backstage.io/owner': 'group:default/payments-team' },
        },
        spec: {
          displayName: 'Notified API',
          targetRef: {
            group: 'gateway.networking.k8s.io',
            kind: 'HTTPRoute',
            name: route,
          },
          publishStatus: 'Published',
        },
      });
      const ref: ObjectRef = { namespace: NS, name: product.metadata.name };
      return { ref, topic: `APIProduct ${NS}/${ref.name}` };
    };

    it("tells bob and dave of alice's request, then alice of the approval and its reason", async () => {
      const { ref, topic } = await createProduct('toystore');
      const key = await clients.alice.createRequest({
        apiProductRef: ref,
        planTier: 'gold',
      });
      const link = `/portal/requests/${NS}/${key.metadata.name}`;

      for (const owner of ['bob', 'dave']) {
        const notification = await firstNotification(owner, topic);
        expect(notification.payload).toMatchObject({
          title: 'New API key request for Notified API',
          link,
          topic,
        });
        expect(notification.payload.description).toContain('user:default/alice');
      }
      expect(await notificationsOf(backend, tokens.alice, topic)).toEqual([]);

      await clients.bob.approveRequest(key.metadata, {
        reason: 'welcome aboard',
      });
      const approval = await firstNotification('alice', topic);
      expect(approval.payload).toMatchObject({
        title: `Your gold API key request for ${NS}/${ref.name} was approved`,
        description: `Your gold API key request for ${NS}/${ref.name} was approved: welcome aboard`,
        link,
      });
    }, 60_000);

    it('sends alice one notification for a bulk approval of 20 of her keys', async () => {
      const { ref, topic } = await createProduct('toystore-admin');
      const keys = [];
      for (let i = 1; i <= 20; i++) {
        keys.push(
          await clients.alice.createRequest({
            apiProductRef: ref,
            planTier: `tier-${i}`,
          }),
        );
      }
      const { results } = await clients.bob.bulkApproveRequests({
        requests: keys.map(key => ({ namespace: NS, name: key.metadata.name })),
        reason: 'all at once',
      });
      expect(results.filter(result => result.success)).toHaveLength(20);

      // The portal answers after the notifications backend has stored what it sent.
      const received = await notificationsOf(backend, tokens.alice, topic);
      expect(received.map(n => n.payload.title)).toEqual([
        `20 of your API key requests for ${NS}/${ref.name} were approved`,
      ]);
      expect(received[0].payload.description).toContain('all at once');
      // The owners heard of each of the 20 requests.
      expect(await notificationsOf(backend, tokens.dave, topic)).toHaveLength(20);
    }, 120_000);
  },
);
