/*
 * The expiry task as the plugin wires it (contract mcp-access §4.5): scheduled as
 * `portal-key-expiry` with `portal.keyExpiry.schedule` (or every minute), and its run announces
 * a key whose `expiresAt` has passed on the plugin's events service, once. The real plugin on
 * SQLite with the real events service; the scheduler is a test double that records the task so
 * the test runs it (the real scheduler would run it after its frequency), and permissions allow
 * everything (permission.enabled: false).
 */
import path from 'node:path';
import {
  createServiceFactory,
  type SchedulerServiceTaskInvocationDefinition,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { DefaultEventsService, eventsServiceRef } from '@backstage/plugin-events-node';
import { PORTAL_EVENTS_TOPIC, type PortalEventPayload } from '@devportal/plugin-portal-common';
import request from 'supertest';
import { portalPlugin } from './plugin';

const TOYSTORE_MANIFEST = path.resolve(__dirname, '..', '..', '..', 'examples', 'toystore.yaml');
const ALICE = 'user:default/alice';

async function startPortal(portal: Record<string, unknown> = {}) {
  const tasks: SchedulerServiceTaskInvocationDefinition[] = [];
  const scheduler = mockServices.scheduler.mock({
    scheduleTask: jest.fn(async task => {
      tasks.push(task);
    }),
  });
  const logger = mockServices.logger.mock();
  const events = DefaultEventsService.create({ logger });
  const published: PortalEventPayload[] = [];
  await events.subscribe({
    id: 'test',
    topics: [PORTAL_EVENTS_TOPIC],
    onEvent: async params => {
      published.push(params.eventPayload as PortalEventPayload);
    },
  });
  const backend = await startTestBackend({
    features: [
      portalPlugin,
      scheduler.factory,
      createServiceFactory({ service: eventsServiceRef, deps: {}, factory: () => events }),
      mockServices.rootConfig.factory({
        data: { portal: { manifests: [TOYSTORE_MANIFEST], ...portal } },
      }),
    ],
  });
  return { backend, tasks, published };
}

describe('portal plugin: the key expiry task', () => {
  it('schedules portal-key-expiry every minute by default, or as portal.keyExpiry.schedule says', async () => {
    const byDefault = await startPortal();
    const configured = await startPortal({
      keyExpiry: { schedule: { frequency: { minutes: 5 }, timeout: { seconds: 30 } } },
    });
    try {
      expect(byDefault.tasks).toEqual([
        expect.objectContaining({
          id: 'portal-key-expiry',
          frequency: { minutes: 1 },
          timeout: { minutes: 1 },
        }),
      ]);
      expect(configured.tasks).toEqual([
        expect.objectContaining({
          id: 'portal-key-expiry',
          frequency: { minutes: 5 },
          timeout: { seconds: 30 },
        }),
      ]);
    } finally {
      await byDefault.backend.stop();
      await configured.backend.stop();
    }
  });

  it('announces an Approved key once its expiresAt has passed, and only once', async () => {
    const { backend, tasks, published } = await startPortal();
    const as = { Authorization: mockCredentials.user.header(ALICE) };
    try {
      const created = await request(backend.server)
        .post('/api/portal/apiproducts')
        .set(as)
        .send({
          metadata: { namespace: 'toystore', name: 'toys' },
          spec: {
            displayName: 'Toys',
            targetRef: { group: 'gateway.networking.k8s.io', kind: 'HTTPRoute', name: 'toystore' },
            publishStatus: 'Published',
            approvalMode: 'automatic',
          },
        });
      expect(created.status).toBe(201);
      // The nearest expiry the API accepts is in the future: one second from now.
      const expiresAt = new Date(Math.ceil(Date.now() / 1000) * 1000 + 1000).toISOString();
      const key = await request(backend.server)
        .post('/api/portal/requests')
        .set(as)
        .send({
          apiProductRef: { namespace: 'toystore', name: 'toys' },
          planTier: 'gold',
          expiresAt,
        });
      expect(key.status).toBe(201);
      expect(key.body.status.phase).toBe('Approved');
      const [task] = tasks;
      const run = () => task.fn(new AbortController().signal);

      // Before its expiresAt the task announces nothing; after it, the key once.
      await run();
      expect(published.filter(e => e.type === 'apikey.expired')).toEqual([]);
      while (Date.now() <= Date.parse(expiresAt)) {
        // Polls the clock (a condition, not a fixed wait).
        await new Promise(resolve => setTimeout(resolve, 50));
      }
      await run();
      await run();
      expect(published.filter(e => e.type === 'apikey.expired')).toEqual([
        expect.objectContaining({
          ref: { namespace: 'toystore', name: key.body.metadata.name },
          actor: 'system:key-expiry',
          uid: key.body.metadata.uid,
        }),
      ]);
    } finally {
      await backend.stop();
    }
  });
});
