/*
 * What the service announces after each stored change (spec §11): the events on the real
 * events service (its in-process bus, subscribed to like any plugin would) and the
 * notifications, recorded by a test double of the notifications service (the real
 * notifications backend runs in packages/backend's end-to-end tests). The store is the
 * Kubernetes store on the fake API server of @internal/fake-kube-apiserver.
 */
import path from 'node:path';
import { mockServices } from '@backstage/backend-test-utils';
import { DefaultEventsService, type EventParams } from '@backstage/plugin-events-node';
import type {
  NotificationSendOptions,
  NotificationService,
} from '@backstage/plugin-notifications-node';
import {
  OWNER_ANNOTATION,
  PORTAL_EVENTS_TOPIC,
  type PortalEventPayload,
} from '@devportal/plugin-portal-common';
import type { FakeKubeApiServer } from '@internal/fake-kube-apiserver';
import type { NotificationLinks } from '../config';
import { ManifestResourceSource } from '../resources/ManifestResourceSource';
import { storeOnFakeApiServer } from '../store/kubernetes/testing';
import { DefaultPortalService } from './DefaultPortalService';
import { refOfKey } from './records';
import { credentialsOf as as, testActors } from './__testUtils__/testActors';
import { PortalEventPublisher } from './PortalEventPublisher';
import { PortalNotifier } from './PortalNotifier';

const TEST_TIMEOUT_MS = 20_000;
const TOYSTORE = path.resolve(__dirname, '../../../../examples/toystore.yaml');
const TEAM = 'group:default/payments-team';
const actor = (name: string, groups: string[] = []) => ({
  userRef: `user:default/${name}`,
  ownershipRefs: [`user:default/${name}`, ...groups],
});
const ALICE = actor('alice');
const DAVE = actor('dave');
const BOB = actor('bob', [TEAM]);
const TOYS = { namespace: 'toystore', name: 'toys' };

describe('DefaultPortalService: events and notifications after each change', () => {
  let fake: FakeKubeApiServer;
  let service: DefaultPortalService;
  let events: PortalEventPayload[];
  let sent: NotificationSendOptions[];
  let notifications: NotificationService;
  let logger: ReturnType<typeof mockServices.logger.mock>;

  const start = async (links?: NotificationLinks) => {
    const started = await storeOnFakeApiServer();
    fake = started.fake;
    const eventsService = DefaultEventsService.create({ logger });
    await eventsService.subscribe({
      id: 'test',
      topics: [PORTAL_EVENTS_TOPIC],
      onEvent: async (params: EventParams) => {
        events.push(params.eventPayload as PortalEventPayload);
      },
    });
    service = DefaultPortalService.create({
      store: started.store,
      resources: await ManifestResourceSource.fromFiles([TOYSTORE]),
      actors: testActors([ALICE, DAVE, BOB]),
      events: PortalEventPublisher.create({ events: eventsService, logger }),
      notifier: PortalNotifier.create({ notifications, logger, links }),
    });
  };

  beforeEach(() => {
    events = [];
    sent = [];
    logger = mockServices.logger.mock();
    notifications = {
      send: async options => {
        sent.push(options);
      },
    };
  });

  afterEach(async () => {
    await fake?.close();
  });

  /** A Published product of payments-team on the toystore route. */
  const createProduct = (
    name: string,
    displayName: string,
    approvalMode: 'manual' | 'automatic' = 'manual',
  ) =>
    service.createProduct(as(BOB), {
      metadata: {
        namespace: 'toystore',
        name,
        annotations: { [OWNER_ANNOTATION]: TEAM },
      },
      spec: {
        displayName,
        targetRef: {
          group: 'gateway.networking.k8s.io',
          kind: 'HTTPRoute',
          name: 'toystore',
        },
        approvalMode,
        publishStatus: 'Published',
      },
    });
  const createToys = (approvalMode: 'manual' | 'automatic' = 'manual') =>
    createProduct(TOYS.name, 'Toys', approvalMode);
  const request = async (who: typeof ALICE, planTier = 'gold') =>
    service.createRequest(as(who), {
      apiProductRef: TOYS,
      planTier,
      useCase: 'checkout',
    });

  it(
    'publishes apiproduct.created, updated and deleted with the actor and the product',
    async () => {
      await start();
      const created = await createToys();
      await service.updateProduct(as(BOB), TOYS, {
        spec: { description: 'toys' },
      });
      await service.deleteProduct(as(BOB), TOYS);
      expect(events).toEqual(
        ['created', 'updated', 'deleted'].map(what => ({
          type: `apiproduct.${what}`,
          ref: TOYS,
          actor: BOB.userRef,
          product: TOYS,
          target: { kind: 'HTTPRoute', name: 'toystore' },
          uid: created.metadata.uid,
        })),
      );
    },
    TEST_TIMEOUT_MS,
  );

  it(
    "notifies the product's owners of a Pending request, without the requester, linking to it",
    async () => {
      await start();
      await createToys();
      const key = await request(ALICE);
      expect(events.at(-1)).toEqual({
        type: 'apikey.requested',
        ref: { namespace: 'toystore', name: key.metadata.name },
        actor: ALICE.userRef,
        product: TOYS,
        target: { kind: 'HTTPRoute', name: 'toystore' },
        uid: key.metadata.uid,
      });
      expect(sent).toEqual([
        {
          recipients: {
            type: 'entity',
            entityRef: TEAM,
            excludeEntityRef: ALICE.userRef,
          },
          payload: expect.objectContaining({
            title: 'New API key request for Toys',
            description: `${ALICE.userRef} requests a gold key for Toys: checkout`,
            link: `/portal/requests/toystore/${key.metadata.name}`,
            topic: 'APIProduct toystore/toys',
          }),
        },
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'sends one notification per requester for a review of many keys, with the reason',
    async () => {
      await start();
      await createToys();
      const keys = [
        await request(ALICE, 'gold'),
        await request(ALICE, 'silver'),
        await request(ALICE, 'bronze'),
        await request(DAVE, 'gold'),
      ];
      sent = [];
      events = [];
      await service.bulkReview(as(BOB), keys.map(refOfKey), 'approve', 'welcome');

      expect(events.map(event => [event.type, event.ref.name])).toEqual(
        keys.map(key => ['apikey.approved', key.metadata.name]),
      );
      expect(sent.map(n => [n.recipients, n.payload.title, n.payload.description])).toEqual([
        [
          {
            type: 'entity',
            entityRef: ALICE.userRef,
            excludeEntityRef: BOB.userRef,
          },
          '3 of your API key requests for toystore/toys were approved',
          '3 of your API key requests for toystore/toys were approved: welcome',
        ],
        [
          {
            type: 'entity',
            entityRef: DAVE.userRef,
            excludeEntityRef: BOB.userRef,
          },
          'Your gold API key request for toystore/toys was approved',
          'Your gold API key request for toystore/toys was approved: welcome',
        ],
      ]);
      expect(sent.map(n => n.payload.topic)).toEqual([
        'APIProduct toystore/toys',
        'APIProduct toystore/toys',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'sends one notification to a requester whose reviewed keys span two products',
    async () => {
      await start();
      await createToys();
      const other = await createProduct('games', 'Games');
      const keys = [
        await request(ALICE),
        await service.createRequest(as(ALICE), {
          apiProductRef: other.metadata,
          planTier: 'gold',
        }),
      ];
      sent = [];
      await service.bulkReview(as(BOB), keys.map(refOfKey), 'reject');
      expect(sent).toHaveLength(1);
      expect(sent[0].payload).toMatchObject({
        title: '2 of your API key requests for toystore/toys, toystore/games were rejected',
        topic: 'API key requests',
        link: '/portal/requests',
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'announces a rejection, a secret reveal and a deletion, never with the secret',
    async () => {
      await start();
      await createToys();
      const rejected = await service.reviewRequest(
        as(BOB),
        refOfKey(await request(ALICE, 'silver')),
        'reject',
        'use gold',
      );
      expect(sent.at(-1)?.payload).toMatchObject({
        title: 'Your silver API key request for toystore/toys was rejected',
        description: 'Your silver API key request for toystore/toys was rejected: use gold',
        severity: 'high',
      });
      const approved = await service.reviewRequest(
        as(BOB),
        refOfKey(await request(ALICE, 'gold')),
        'approve',
      );
      const secret = await service.revealSecret(as(ALICE), refOfKey(approved));
      await service.deleteRequest(as(ALICE), refOfKey(approved));
      expect(events.slice(-3).map(event => event.type)).toEqual([
        'apikey.approved',
        'apikey.secret-revealed',
        'apikey.deleted',
      ]);
      expect(events.find(e => e.type === 'apikey.rejected')?.ref.name).toBe(rejected.metadata.name);
      expect(JSON.stringify([events, sent])).not.toContain(secret);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'tells the requester, with the reason, when someone else revokes or deletes their key; not when they do it',
    async () => {
      await start();
      await createToys();
      const approved = await service.reviewRequest(
        as(BOB),
        refOfKey(await request(ALICE, 'gold')),
        'approve',
      );
      const pending = await request(DAVE, 'silver');
      const own = await request(DAVE, 'bronze');
      sent = [];
      // The service is undecorated: who may delete whose key is AuthorizedPortalService's test.
      await service.deleteRequest(as(BOB), refOfKey(approved), 'contract ended');
      await service.deleteRequest(as(BOB), refOfKey(pending));
      await service.deleteRequest(as(DAVE), refOfKey(own), 'not needed');
      expect(
        sent.map(n => [n.recipients, n.payload.title, n.payload.description, n.payload.severity]),
      ).toEqual([
        [
          { type: 'entity', entityRef: ALICE.userRef, excludeEntityRef: BOB.userRef },
          'Your gold API key for toystore/toys was revoked',
          'Your gold API key for toystore/toys was revoked: contract ended',
          'high',
        ],
        [
          { type: 'entity', entityRef: DAVE.userRef, excludeEntityRef: BOB.userRef },
          'Your silver API key request for toystore/toys was deleted',
          'Your silver API key request for toystore/toys was deleted.',
          'normal',
        ],
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'links to the configured frontend paths',
    async () => {
      await start({
        requestUrlTemplate: '/kuadrant/requests/{namespace}?key={name}',
        requestsUrl: '/kuadrant/requests',
      });
      await createToys();
      const keys = [await request(ALICE, 'gold'), await request(ALICE, 'silver')];
      await service.bulkReview(as(BOB), keys.map(refOfKey), 'approve');
      expect(sent.map(n => n.payload.link)).toEqual([
        `/kuadrant/requests/toystore?key=${keys[0].metadata.name}`,
        `/kuadrant/requests/toystore?key=${keys[1].metadata.name}`,
        '/kuadrant/requests',
      ]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'publishes requested and approved for automatic approval, and notifies nobody',
    async () => {
      await start();
      await createToys('automatic');
      const key = await request(ALICE);
      expect(key.status?.phase).toBe('Approved');
      expect(events.slice(-2)).toEqual([
        expect.objectContaining({
          type: 'apikey.requested',
          actor: ALICE.userRef,
        }),
        expect.objectContaining({
          type: 'apikey.approved',
          actor: 'system:automatic-approval',
        }),
      ]);
      expect(sent).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'still succeeds when sending a notification fails, and logs no secret',
    async () => {
      notifications = {
        send: async () => {
          throw new Error('notifications backend unavailable');
        },
      };
      await start();
      await createToys();
      const approved = await service.reviewRequest(
        as(BOB),
        refOfKey(await request(ALICE)),
        'approve',
        'ok',
      );
      expect(approved.status?.phase).toBe('Approved');
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringContaining('notifications backend unavailable'),
      );
      const secret = await service.revealSecret(as(ALICE), refOfKey(approved));
      expect(JSON.stringify(logger.warn.mock.calls)).not.toContain(secret);
    },
    TEST_TIMEOUT_MS,
  );
});
