/*
 * Task status notifications, 2025-11-25 client × 2025-11-25 backend
 * (docs/contracts/tasks-and-apps.md §2.10, §2.14 `ended`), through the whole plugin
 * (startTestBackend) with the real tasks fixture (`deploy`, finished by the test) and the official
 * SDK 1.x client, whose GET stream hears `notifications/tasks/status`. One replica in memory; then
 * two plugin instances on one database (SQLite and PostgreSQL) as two replicas, each reaching the
 * fixture under its own query string so the fixture's record tells which replica polled.
 * Tests wait for notifications and states, never for a time: the poll interval is 20 ms.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import { startTasksServer, type LegacyTasksServer } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { waitFor } from './testing/waitFor';
import { taskRefOf } from './tasks/TaskAuditor';
import { startTaskBroker, type TaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { TASKS_TABLE } from './store/DatabaseTaskStore';
import { TASK_LEASE_RENEW_MS } from './tasks/TaskWatcher';
import { MetricName } from './telemetry/BrokerMetrics';
import { InMemoryTelemetry, pointWith } from './telemetry/__testUtils__/inMemoryTelemetry';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** A broker replica with the fixture as `jobs` at `fixtureUrl`; on `knex` when given. */
const startReplica = (fixtureUrl: string, auditor: unknown, knex?: Knex): Promise<TaskBroker> =>
  startTaskBroker({
    fixtureUrl,
    auditor,
    revoked,
    knex,
    tasks: { minPollInterval: { milliseconds: 20 } },
  });

/** A client of `user` whose GET stream is open, with the task notifications it received. */
interface Listening {
  client: Client;
  notes: TaskStatusNotification['params'][];
  /** Resolves with the notification of `taskId` in `status`, once it arrived. */
  heard(taskId: string, status: string): Promise<TaskStatusNotification['params']>;
}

const clients: Client[] = [];

/** The `clients` of the replica at `url` (its /status). */
async function clientsOf(url: URL): Promise<{ eventStreams: number; tasksWatched: number }> {
  const response = await fetch(new URL('/api/mcp-broker/status', url), {
    headers: { Authorization: mockCredentials.user.header('user:default/admin') },
  });
  return (await response.json()).clients;
}

/** How many GET streams the replica at `url` holds open (its /status). */
async function eventStreamsOf(url: URL): Promise<number> {
  return (await clientsOf(url)).eventStreams;
}

/** Connects `user` to the replica at `url` and waits until the client's GET stream is open. */
async function listen(user: string, url: URL): Promise<Listening> {
  const client = new Client({ name: 'task-notifications-test', version: '1.0.0' });
  const notes: TaskStatusNotification['params'][] = [];
  client.setNotificationHandler(TaskStatusNotificationSchema, async notification => {
    notes.push(notification.params);
  });
  const before = await eventStreamsOf(url);
  await client.connect(
    new StreamableHTTPClientTransport(url, {
      requestInit: {
        headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
      },
    }),
  );
  clients.push(client);
  await waitFor(
    async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
    'the tasks fixture to be listed',
  );
  await waitFor(async () => (await eventStreamsOf(url)) > before, `${user}'s GET stream`);
  return {
    client,
    notes,
    heard: async (taskId, status) =>
      (await waitFor(
        () => notes.find(note => note.taskId === taskId && note.status === status),
        `${user} to hear that ${taskId} is ${status}`,
      ))!,
  };
}

const startDeploy = async (client: Client, target: string) =>
  (
    await client.request(
      { method: 'tools/call', params: { name: 'jobs_deploy', arguments: { target }, task: {} } },
      CreateTaskResultSchema,
    )
  ).task;

describe('task status notifications on one replica (sessionStore: memory)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  // The OpenTelemetry SDK in memory: the watched-tasks gauge and the notifications counter.
  const sdk = new InMemoryTelemetry();
  let fixture: LegacyTasksServer;
  let broker: TaskBroker;
  const metricOf = async (name: string) =>
    (await sdk.points(name)).reduce((sum, point) => sum + point.value, 0);

  beforeAll(async () => {
    sdk.install();
    fixture = await startTasksServer();
    broker = await startReplica(fixture.url, auditorFactory);
  }, 60_000);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map(client => client.close()));
    // The next test counts the streams it opens.
    await waitFor(async () => (await eventStreamsOf(broker.url)) === 0, 'the streams to close');
  });

  afterAll(async () => {
    await broker?.stop();
    await fixture?.close();
    await sdk.uninstall();
  }, 30_000);

  it('tells the owner’s GET stream that its task finished, once, under the broker id; another person hears nothing of it', async () => {
    const alice = await listen('alice', broker.url);
    const bob = await listen('bob', broker.url);
    const sentBefore = await metricOf(MetricName.taskNotificationsSent);
    const task = await startDeploy(alice.client, 'noted');
    const job = await fixture.started('noted');
    await alice.heard(task.taskId, 'working');
    // The replica watches it while alice listens.
    await waitFor(async () => (await metricOf(MetricName.tasksWatched)) === 1, 'a watched task');
    await fixture.finish('noted', 'completed');
    const done = await alice.heard(task.taskId, 'completed');
    expect(done).toEqual({
      taskId: task.taskId,
      status: 'completed',
      createdAt: expect.any(String),
      lastUpdatedAt: expect.any(String),
      ttl: task.ttl,
      pollInterval: 100,
    });
    expect(JSON.stringify(alice.notes)).not.toContain(job.taskId);
    // The watcher polled the task on the session that created it.
    expect(
      fixture.requests.filter(r => r.method === 'tasks/get' && r.taskId === job.taskId).length,
    ).toBeGreaterThan(0);
    // Bob's own task reaches bob after alice's ended: by then he would have heard of hers.
    const own = await startDeploy(bob.client, 'bobs');
    await fixture.started('bobs');
    await fixture.finish('bobs', 'completed');
    await bob.heard(own.taskId, 'completed');
    expect(new Set(bob.notes.map(note => note.taskId))).toEqual(new Set([own.taskId]));
    // Alice's two notifications and bob's two, each counted once.
    expect((await metricOf(MetricName.taskNotificationsSent)) - sentBefore).toBe(4);
    expect(pointWith(await sdk.points(MetricName.taskNotificationsSent), {}).attributes).toEqual({
      'mcp_broker.era': 'legacy',
    });
    await waitFor(async () => (await metricOf(MetricName.tasksWatched)) === 0, 'no watched task');
    expect(alice.notes.filter(note => note.taskId === own.taskId)).toEqual([]);
    // Each change once per stream; `ended` audited once, with the status and the task's age.
    expect(alice.notes.filter(note => note.taskId === task.taskId).map(n => n.status)).toEqual([
      'working',
      'completed',
    ]);
    const ended = audit.filter(
      e => e.meta.operation === 'ended' && e.meta.taskRef === taskRefOf(task.taskId),
    );
    expect(ended).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ status: 'completed', ageMs: expect.any(Number) }),
      }),
    ]);
  }, 30_000);

  it('sends nothing once the person’s tool.use is taken away', async () => {
    const erin = await listen('erin', broker.url);
    const user = 'user:default/erin';
    const task = await startDeploy(erin.client, 'withheld');
    await fixture.started('withheld');
    await erin.heard(task.taskId, 'working');
    revoked.add(user);
    try {
      // Erin's decision is a denial from now on (cached or taken again).
      await waitFor(
        async () => !(await erin.client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
        'the revocation to reach the decision cache',
      );
      await fixture.finish('withheld', 'completed');
      // The change is audited, then published and delivered within the same turn (one replica,
      // nothing but the permission decision in between): once the test sees the audit event,
      // the delivery was decided.
      await waitFor(
        () =>
          audit.some(
            e => e.meta.operation === 'ended' && e.meta.taskRef === taskRefOf(task.taskId),
          ),
        'the watcher to see the task end',
      );
    } finally {
      revoked.delete(user);
    }
    await waitFor(
      async () => (await erin.client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
      'the restored decision to reach the decision cache',
    );
    // A later task's notification comes behind anything sent to the stream before it.
    const later = await startDeploy(erin.client, 'allowed');
    await fixture.started('allowed');
    await fixture.finish('allowed', 'completed');
    await erin.heard(later.taskId, 'completed');
    expect(erin.notes.filter(note => note.taskId === task.taskId).map(n => n.status)).toEqual([
      'working',
    ]);
  }, 30_000);
});

const { engines } = replicaDatabases('task notification tests');

describe.each(engines)('task status notifications across two replicas on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('lets one replica poll a task, tells the owner’s streams on both, and gives the lease up when the streams close', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const a = await startReplica(`${fixture.url}?replica=a`, factory, knexes[0]);
    const b = await startReplica(`${fixture.url}?replica=b`, factory, knexes[1]);
    const leaseOf = async (taskId: string) =>
      (await knexes[1](TASKS_TABLE).where({ task_id: taskId }).first('lease_holder'))?.lease_holder;
    try {
      const onA = await listen('alice', a.url);
      const task = await startDeploy(onA.client, 'replicated');
      const job = await fixture.started('replicated');
      await waitFor(async () => (await leaseOf(task.taskId)) !== null, 'A to take the lease');
      // The operator sees which replica watches it.
      await waitFor(async () => (await clientsOf(a.url)).tasksWatched === 1, 'A to watch it');
      expect((await clientsOf(b.url)).tasksWatched).toBe(0);
      const onB = await listen('alice', b.url);
      await fixture.finish('replicated', 'completed');
      // B's stream hears of the change A observed, through the signal bus.
      await onB.heard(task.taskId, 'completed');
      await onA.heard(task.taskId, 'completed');
      expect(onB.notes.filter(note => note.taskId === task.taskId)).toHaveLength(1);
      const polls = fixture.requests.filter(
        r => r.method === 'tasks/get' && r.taskId === job.taskId,
      );
      expect(polls.length).toBeGreaterThan(0);
      expect(new Set(polls.map(r => r.path))).toEqual(new Set(['/mcp?replica=a']));
      // Ended: the lease is given up.
      await waitFor(async () => (await leaseOf(task.taskId)) === null, 'the lease to go');
      await waitFor(async () => (await clientsOf(a.url)).tasksWatched === 0, 'A to watch nothing');

      // An open task's lease goes when its person's last stream here closes.
      const open = await startDeploy(onA.client, 'held');
      // Both replicas have alice's streams now: either may watch it.
      await waitFor(async () => (await leaseOf(open.taskId)) !== null, 'a replica to watch it');
      await onB.client.close();
      await onA.client.close();
      await waitFor(async () => (await leaseOf(open.taskId)) === null, 'the lease to be released');
      expect((await knexes[1](TASKS_TABLE).where({ task_id: open.taskId }).first())?.status).toBe(
        'working',
      );
    } finally {
      await Promise.all(clients.splice(0).map(client => client.close()));
      await a.stop();
      await b.stop();
      await fixture.close();
    }
  }, 60_000);

  it('lets another replica with the person’s stream take the task over when the watching one lets it go', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const a = await startReplica(`${fixture.url}?replica=a`, factory, knexes[0]);
    const b = await startReplica(`${fixture.url}?replica=b`, factory, knexes[1]);
    const leaseOf = async (taskId: string) =>
      (await knexes[1](TASKS_TABLE).where({ task_id: taskId }).first('lease_holder'))?.lease_holder;
    try {
      const onA = await listen('alice', a.url);
      const task = await startDeploy(onA.client, 'handed-over');
      const job = await fixture.started('handed-over');
      const fromA = await waitFor(() => leaseOf(task.taskId), 'A to take the lease');
      const onB = await listen('alice', b.url);
      // Alice's stream on A ends: A gives the lease up; B looks for unheld tasks of the people
      // listening there at its next lease renewal (TASK_LEASE_RENEW_MS).
      await onA.client.close();
      const fromB = await waitFor(
        async () => {
          const holder = await leaseOf(task.taskId);
          return holder !== null && holder !== fromA ? holder : undefined;
        },
        'B to take the lease over',
        TASK_LEASE_RENEW_MS + 5_000,
      );
      expect(fromB).toEqual(expect.any(String));
      await fixture.finish('handed-over', 'completed');
      await onB.heard(task.taskId, 'completed');
      const polledByB = fixture.requests.filter(
        r => r.method === 'tasks/get' && r.taskId === job.taskId && r.path === '/mcp?replica=b',
      );
      expect(polledByB.length).toBeGreaterThan(0);
    } finally {
      await Promise.all(clients.splice(0).map(client => client.close()));
      await a.stop();
      await b.stop();
      await fixture.close();
    }
  }, 60_000);
});
