/*
 * The expiry task's announcements (contract mcp-access §4.5, §4.6) on the real database store
 * (SQLite, and PostgreSQL when BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING is set),
 * the real events service (its in-process bus, subscribed to as the broker's module does), and
 * a test double of the notifications service that records what is sent (the real
 * notifications backend runs in packages/backend's end-to-end tests).
 */
import { mockServices, TestDatabases } from '@backstage/backend-test-utils';
import { DefaultEventsService } from '@backstage/plugin-events-node';
import type { NotificationSendOptions } from '@backstage/plugin-notifications-node';
import {
  OWNER_ANNOTATION,
  PORTAL_EVENTS_TOPIC,
  type ApiProductSpec,
  type PortalEventPayload,
} from '@devportal/plugin-portal-common';
import knexFactory, { type Knex } from 'knex';
import { DatabasePortalStore } from '../store/DatabasePortalStore';
import type { PortalStore } from '../store/types';
import { KEY_EXPIRY_ACTOR, KeyExpiryAnnouncer } from './KeyExpiryAnnouncer';
import { PortalEventPublisher } from './PortalEventPublisher';
import { PortalNotifier } from './PortalNotifier';

const TEST_TIMEOUT_MS = 60_000;
const POSTGRES_ENV = 'BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING';
// PostgreSQL only where a server is configured (no container runtime here), as the store tests.
const databases = TestDatabases.create({
  ids: process.env[POSTGRES_ENV] ? ['POSTGRES_15', 'SQLITE_3'] : ['SQLITE_3'],
});
const NOW = new Date('2030-06-01T12:00:00Z');
const PAST = '2030-06-01T11:00:00Z';
const FUTURE = '2030-06-02T12:00:00Z';
const ALICE = 'user:default/alice';
const BOB = 'user:default/bob';
const CAROL = 'user:default/carol';
const TEAM = 'group:default/payments-team';

const HTTP_PRODUCT: ApiProductSpec = {
  displayName: 'Toy store',
  targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
  approvalMode: 'manual',
  publishStatus: 'Published',
};
const MCP_PRODUCT: ApiProductSpec = {
  displayName: 'Example tools',
  targetRef: { group: 'mcp.devportal.io', kind: 'MCPServer', name: 'example' },
  approvalMode: 'manual',
  publishStatus: 'Published',
  plans: [{ tier: 'bronze', limits: { toolCalls: [{ calls: 5, per: 'day' }] } }],
};

describe.each(databases.eachSupportedId())('KeyExpiryAnnouncer on %s', databaseId => {
  let connections: Knex[];
  let events: PortalEventPayload[];
  let sent: NotificationSendOptions[];
  let logger: ReturnType<typeof mockServices.logger.mock>;
  let eventsService: DefaultEventsService;

  /** A store on the test database: each call on PostgreSQL a pool of its own (a replica). */
  async function replicaStore(shared?: Knex): Promise<PortalStore> {
    const knex =
      shared === undefined || databaseId === 'SQLITE_3'
        ? (shared ?? (await databases.init(databaseId)))
        : knexFactory(shared.client.config);
    connections.push(knex);
    return DatabasePortalStore.create({ database: { getClient: async () => knex } });
  }

  function announcer(store: PortalStore) {
    return KeyExpiryAnnouncer.create({
      store,
      events: PortalEventPublisher.create({ events: eventsService, logger }),
      notifier: PortalNotifier.create({
        notifications: {
          send: async options => {
            sent.push(options);
          },
        },
        logger,
      }),
      logger,
      now: () => NOW,
    });
  }

  beforeEach(async () => {
    connections = [];
    events = [];
    sent = [];
    logger = mockServices.logger.mock();
    eventsService = DefaultEventsService.create({ logger });
    await eventsService.subscribe({
      id: 'test',
      topics: [PORTAL_EVENTS_TOPIC],
      onEvent: async params => {
        events.push(params.eventPayload as PortalEventPayload);
      },
    });
  });

  afterEach(async () => {
    // Other pools before the first, which TestDatabases owns and closes at the end.
    for (const knex of connections.slice(1).reverse()) await knex.destroy();
  });

  async function seed(store: PortalStore) {
    for (const [name, spec] of [
      ['toys', HTTP_PRODUCT],
      ['example-tools', MCP_PRODUCT],
    ] as const) {
      await store.createProduct({
        namespace: 'toystore',
        name,
        annotations: { [OWNER_ANNOTATION]: TEAM },
        spec,
      });
    }
    const key = (product: string, tier: string, userId: string, expiresAt: string) =>
      store.createKey({
        namespace: 'toystore',
        spec: {
          apiProductRef: { name: product },
          planTier: tier,
          requestedBy: { userId },
          expiresAt,
        },
        approval: {
          reviewedBy: BOB,
          ...(product === 'toys' && { secret: `secret-${userId}-${product}` }),
        },
      });
    return {
      expired: [
        await key('example-tools', 'bronze', ALICE, PAST),
        await key('toys', 'gold', ALICE, PAST),
        await key('example-tools', 'bronze', CAROL, PAST),
      ],
      live: await key('example-tools', 'bronze', BOB, FUTURE),
    };
  }

  it(
    'announces each expired key once when two replicas run at the same time, one notification per requester',
    async () => {
      const first = await replicaStore();
      const second = await replicaStore(connections[0]);
      const { expired } = await seed(first);

      const counts = await Promise.all([announcer(first).run(), announcer(second).run()]);

      expect(counts[0] + counts[1]).toBe(3);
      expect(events.map(event => event.uid).sort()).toEqual(
        expired.map(key => key.metadata.uid).sort(),
      );
      expect(events.every(e => e.type === 'apikey.expired' && e.actor === KEY_EXPIRY_ACTOR)).toBe(
        true,
      );
      const carols = expired[2];
      expect(events).toContainEqual({
        type: 'apikey.expired',
        ref: { namespace: 'toystore', name: carols.metadata.name },
        actor: KEY_EXPIRY_ACTOR,
        product: { namespace: 'toystore', name: 'example-tools' },
        target: { kind: 'MCPServer', name: 'example' },
        uid: carols.metadata.uid,
      });

      // Each replica notifies the requesters of the keys it claimed: a requester whose keys
      // were split between the two runs hears from both, never twice about one key.
      const titles = sent.map(
        n => `${(n.recipients as { entityRef: string }).entityRef}: ${n.payload.title}`,
      );
      expect(titles).toContain(`${CAROL}: Your access to Example tools expired`);
      expect(titles.filter(t => t.startsWith(CAROL))).toHaveLength(1);
      expect(titles.some(t => t.startsWith(BOB))).toBe(false);

      // Nothing is announced twice.
      events = [];
      sent = [];
      await expect(announcer(first).run()).resolves.toBe(0);
      expect(events).toEqual([]);
      expect(sent).toEqual([]);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'groups one run’s expired keys per requester, in the words of each kind of key',
    async () => {
      const store = await replicaStore();
      const { expired } = await seed(store);

      await expect(announcer(store).run()).resolves.toBe(3);

      expect(sent).toHaveLength(2);
      const [alice, carol] = [ALICE, CAROL].map(ref =>
        sent.find(n => (n.recipients as { entityRef: string }).entityRef === ref),
      );
      expect(alice?.payload).toMatchObject({
        title: '2 of your API keys and access grants for Example tools, toystore/toys expired',
        link: '/portal/requests',
        topic: 'API key requests',
        severity: 'normal',
      });
      expect(carol?.payload).toMatchObject({
        title: 'Your access to Example tools expired',
        description: 'Your access to Example tools expired. Request the product again to renew it.',
        link: `/portal/requests/toystore/${expired[2].metadata.name}`,
        topic: 'APIProduct toystore/example-tools',
      });
      expect(JSON.stringify(sent)).not.toContain('secret-');
    },
    TEST_TIMEOUT_MS,
  );
});
