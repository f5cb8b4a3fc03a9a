/*
 * Task status notifications for 2026-07-28 clients (docs/contracts/tasks-and-apps.md §2.10
 * "Listen filter", "Subscribers", "Fan-out"; §2.13 E4; §2.14 metrics): a `subscriptions/listen`
 * stream naming task ids in `params.notifications.taskIds`, through the whole plugin
 * (startTestBackend) with the real modern tasks fixture and a client speaking raw 2026-07-28
 * HTTP, reading the stream as SSE. The watcher polls the agreed tasks (a small minPollInterval),
 * and the tests wait for what the stream carries, never for a time. Two plugin instances on one
 * database (SQLite and PostgreSQL) are two replicas: a stream on B hears of a task A polls.
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  sseMessages,
  startModernTasksServer,
  startTasksServer,
  TASKS_EXTENSION,
  type ModernTasksServer,
} from '@internal/test-mcp-backends';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { TASKS_TABLE } from './store/DatabaseTaskStore';
import { taskRefOf } from './tasks/TaskAuditor';
import { DECLARING_TASKS, messageOf, modernRequestInit } from './tasks/__testUtils__/modernRequest';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { MetricName } from './telemetry/BrokerMetrics';
import { InMemoryTelemetry, pointWith } from './telemetry/__testUtils__/inMemoryTelemetry';
import { waitFor } from './testing/waitFor';

const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const PER_PERSON = 2;

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** A broker replica with the fixture as `jobs`; on `knex` with `sessionStore: database`. */
async function startReplica(url: string, auditor: unknown, knex?: Knex) {
  const broker = await startTaskBroker({
    fixtureUrl: url,
    auditor,
    revoked,
    knex,
    tasks: { perPerson: PER_PERSON, minPollInterval: { milliseconds: 20 } },
  });
  await waitFor(
    async () => (await toolNames(broker.url, 'alice')).includes('jobs_deploy'),
    'the modern tasks fixture to be listed',
  );
  return broker;
}

let nextId = 1;

async function toolNames(url: URL, user: string): Promise<string[]> {
  const response = await fetch(url, modernRequestInit(user, 'tools/list', {}, nextId++));
  const message = messageOf(await response.text());
  return (message?.result?.tools ?? []).map((tool: any) => tool.name);
}

/** Starts `deploy` of `target` as a task of `user`; its broker id. */
async function startDeploy(url: URL, user: string, target: string): Promise<string> {
  const response = await fetch(
    url,
    modernRequestInit(
      user,
      'tools/call',
      { name: 'jobs_deploy', arguments: { target } },
      nextId++,
      DECLARING_TASKS,
      'jobs_deploy',
    ),
  );
  const task = messageOf(await response.text()).result;
  expect(task).toMatchObject({ resultType: 'task', status: 'working' });
  return task.taskId;
}

/** Open listen streams, closed after each test. */
const readers: Array<ReadableStreamDefaultReader<Uint8Array>> = [];

/**
 * A `subscriptions/listen` of `user` naming `taskIds`: the refusal (status and error), or the
 * acknowledgement and the stream's next messages.
 */
async function listen(
  url: URL,
  user: string,
  taskIds: string[],
  capabilities: Record<string, unknown> = DECLARING_TASKS,
) {
  const id = `listen-${nextId++}`;
  const response = await fetch(
    url,
    modernRequestInit(
      user,
      'subscriptions/listen',
      { notifications: { taskIds } },
      id,
      capabilities,
    ),
  );
  if (!(response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    return { id, status: response.status, error: messageOf(await response.text())?.error };
  }
  const reader = response.body!.getReader();
  readers.push(reader);
  const messages = sseMessages(reader);
  const next = async () => (await messages.next()).value;
  return { id, status: response.status, acknowledged: await next(), next };
}

const closeStreams = () => Promise.all(readers.splice(0).map(reader => reader.cancel()));

/** How many listen streams the replica at `url` holds open (its /status). */
async function listenStreamsOf(url: URL): Promise<number> {
  const response = await fetch(new URL('/api/mcp-broker/status', url), {
    headers: { Authorization: mockCredentials.user.header('user:default/admin') },
  });
  return (await response.json()).clients.listenStreams;
}

/** A `notifications/tasks` as the stream `id` carries it. */
const taskNote = (id: string, taskId: string, status: string) =>
  expect.objectContaining({
    method: 'notifications/tasks',
    params: expect.objectContaining({ taskId, status, _meta: { [SUBSCRIPTION_ID]: id } }),
  });

describe('notifications/tasks on a 2026-07-28 listen stream (sessionStore: memory)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  const sdk = new InMemoryTelemetry();
  let fixture: ModernTasksServer;
  let broker: { url: URL; stop(): Promise<void> };
  const metricOf = async (name: string) =>
    (await sdk.points(name)).reduce((sum, point) => sum + point.value, 0);

  beforeAll(async () => {
    sdk.install();
    fixture = await startModernTasksServer();
    broker = await startReplica(fixture.url, auditorFactory);
  }, 60_000);

  afterEach(closeStreams);

  afterAll(async () => {
    await broker?.stop();
    await fixture?.close();
    await sdk.uninstall();
  }, 30_000);

  it('agrees to the caller’s own tasks only, and tells the stream of each change once, under the broker id', async () => {
    const first = await startDeploy(broker.url, 'alice', 'first');
    const second = await startDeploy(broker.url, 'alice', 'second');
    const bobs = await startDeploy(broker.url, 'bob', 'bobs');
    const [, , bobsJob] = await Promise.all(
      ['first', 'second', 'bobs'].map(target => fixture.started(target)),
    );
    const sentBefore = await metricOf(MetricName.taskNotificationsSent);

    const stream = await listen(broker.url, 'alice', [first, bobs, 'jobs:unknown', second]);
    expect(stream.status).toBe(200);
    // Another person's id and an unknown one are left out, silently.
    expect(stream.acknowledged).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { [SUBSCRIPTION_ID]: stream.id },
        notifications: { taskIds: [first, second] },
      },
    });
    // One low-severity `listen` event per id, with the outcome of its check; never an id.
    const listened = audit.filter(e => e.meta.operation === 'listen');
    expect(listened.map(e => [e.meta.taskRef, e.end?.outcome])).toEqual([
      [taskRefOf(first), 'succeeded'],
      [undefined, 'foreign'],
      [undefined, 'not-found'],
      [taskRefOf(second), 'succeeded'],
    ]);
    expect(listened[0].meta).toMatchObject({
      clientEra: 'modern',
      backendEra: 'modern',
      server: 'jobs',
      tool: 'deploy',
    });
    expect(JSON.stringify(listened)).not.toContain(first);
    await fixture.finish('first', 'completed');
    const firstDone = await stream.next!();
    expect(firstDone).toEqual(taskNote(stream.id, first, 'completed'));
    expect(firstDone.params.ttlMs).toEqual(expect.any(Number));
    // An ended task's result is inlined, as `tasks/get` shows it.
    expect(firstDone.params.result).toMatchObject({
      content: [{ type: 'text', text: 'deployed first' }],
    });
    expect(firstDone.params.error).toBeUndefined();
    expect(JSON.stringify(firstDone)).not.toContain('fixture-');
    // Nothing more of the first task: the next message is the second task's end.
    await fixture.finish('second', 'completed');
    expect(await stream.next!()).toEqual(taskNote(stream.id, second, 'completed'));
    expect((await metricOf(MetricName.taskNotificationsSent)) - sentBefore).toBe(2);
    expect(
      pointWith(await sdk.points(MetricName.taskNotificationsSent), { 'mcp_broker.era': 'modern' })
        .value,
    ).toBe(2);
    // Alice named bob's task, which was left out: the watcher polled her two tasks (their ends
    // arrived) and never bob's, which is still open.
    expect(
      fixture.requests.filter(r => r.method === 'tasks/get' && r.taskId === bobsJob.taskId),
    ).toEqual([]);
    await fixture.finish('bobs', 'completed');
  }, 30_000);

  it('refuses task ids without the tasks extension (E4) and too many ids, opening nothing', async () => {
    const own = await startDeploy(broker.url, 'carol', 'carols');
    await fixture.started('carols');
    await waitFor(async () => (await listenStreamsOf(broker.url)) === 0, 'no listen stream');
    const undeclared = await listen(broker.url, 'carol', [own], {});
    expect(undeclared).toMatchObject({
      status: 400,
      error: {
        code: -32021,
        message: 'Missing required client capability',
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      },
    });
    const many = Array.from({ length: 4 * PER_PERSON + 1 }, (_, i) => `jobs:${i}`);
    const tooMany = await listen(broker.url, 'carol', many);
    expect(tooMany.status).toBe(400);
    expect(tooMany.error.code).toBe(-32602);
    expect(tooMany.error.message).toContain('params.notifications.taskIds');
    expect(tooMany.error.message).toContain(`at most ${4 * PER_PERSON}`);
    expect(await listenStreamsOf(broker.url)).toBe(0);
    // At the bound it is taken.
    const atBound = await listen(broker.url, 'carol', [own, ...many.slice(2)]);
    expect(atBound.acknowledged.params.notifications).toEqual({ taskIds: [own] });
    expect(await listenStreamsOf(broker.url)).toBe(1);
    await fixture.finish('carols', 'completed');
    expect(await atBound.next!()).toEqual(taskNote(atBound.id, own, 'completed'));
  }, 30_000);

  it('sends nothing once the person’s tool.use is taken away', async () => {
    const user = 'user:default/erin';
    const withheld = await startDeploy(broker.url, 'erin', 'withheld');
    const allowed = await startDeploy(broker.url, 'erin', 'allowed');
    await Promise.all(['withheld', 'allowed'].map(target => fixture.started(target)));
    const stream = await listen(broker.url, 'erin', [withheld, allowed]);
    expect(stream.acknowledged.params.notifications.taskIds).toEqual([withheld, allowed]);
    revoked.add(user);
    try {
      await waitFor(
        async () => !(await toolNames(broker.url, 'erin')).includes('jobs_deploy'),
        'the revocation to reach the decision cache',
      );
      await fixture.finish('withheld', 'completed');
      // The watcher saw the end (audited before it is published and delivered).
      await waitFor(
        () =>
          audit.some(e => e.meta.operation === 'ended' && e.meta.taskRef === taskRefOf(withheld)),
        'the watcher to see the task end',
      );
    } finally {
      revoked.delete(user);
    }
    await waitFor(
      async () => (await toolNames(broker.url, 'erin')).includes('jobs_deploy'),
      'the restored decision to reach the decision cache',
    );
    // Deliveries to a stream are in order: the later task's end comes behind anything before.
    await fixture.finish('allowed', 'completed');
    expect(await stream.next!()).toEqual(taskNote(stream.id, allowed, 'completed'));
  }, 30_000);
});

describe('notifications/tasks of a 2025-11-25 backend’s tasks (the legacy tasks fixture)', () => {
  afterEach(closeStreams);

  it('inline the task’s final payload by the status mapping: a tool error is completed with isError', async () => {
    const fixture = await startTasksServer();
    const broker = await startReplica(fixture.url, recordingAuditor().factory);
    try {
      const good = await startDeploy(broker.url, 'alice', 'good');
      const bad = await startDeploy(broker.url, 'alice', 'bad');
      const jobs = await Promise.all(['good', 'bad'].map(target => fixture.started(target)));
      const stream = await listen(broker.url, 'alice', [good, bad]);
      expect(stream.acknowledged.params.notifications.taskIds).toEqual([good, bad]);
      await fixture.finish('bad', 'failed');
      const badDone = await stream.next!();
      expect(badDone).toEqual(taskNote(stream.id, bad, 'completed'));
      expect(badDone.params.result).toMatchObject({
        content: [{ type: 'text', text: 'deploying bad failed' }],
        isError: true,
      });
      expect(badDone.params.result._meta?.[RELATED_TASK]).toBeUndefined();
      await fixture.finish('good', 'completed');
      const goodDone = await stream.next!();
      expect(goodDone).toEqual(taskNote(stream.id, good, 'completed'));
      expect(goodDone.params.result).toMatchObject({
        content: [{ type: 'text', text: 'deployed good' }],
      });
      expect(goodDone.params.result.isError).toBeUndefined();
      // Each final payload was read once, on the task's pinned session, by the change's writer.
      const results = fixture.requests.filter(r => r.method === 'tasks/result');
      expect(results).toHaveLength(2);
      for (const job of jobs) expect(JSON.stringify([badDone, goodDone])).not.toContain(job.taskId);
    } finally {
      await closeStreams();
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

const { engines } = replicaDatabases('modern task notification tests');

describe.each(engines)('notifications/tasks across two replicas on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  afterEach(closeStreams);

  it('tells the listen stream on B of the task A polls', async () => {
    const fixture = await startModernTasksServer();
    const { factory } = recordingAuditor();
    const a = await startReplica(`${fixture.url}?replica=a`, factory, knexes[0]);
    const b = await startReplica(`${fixture.url}?replica=b`, factory, knexes[1]);
    const leaseOf = async (taskId: string) =>
      (await knexes[1](TASKS_TABLE).where({ task_id: taskId }).first('lease_holder'))?.lease_holder;
    try {
      const taskId = await startDeploy(a.url, 'alice', 'replicated');
      const job = await fixture.started('replicated');
      const onA = await listen(a.url, 'alice', [taskId]);
      expect(onA.acknowledged.params.notifications.taskIds).toEqual([taskId]);
      await waitFor(async () => (await leaseOf(taskId)) !== null, 'A to take the lease');
      const onB = await listen(b.url, 'alice', [taskId]);
      expect(onB.acknowledged.params.notifications.taskIds).toEqual([taskId]);
      await fixture.finish('replicated', 'completed');
      const heardOnB = await onB.next!();
      expect(heardOnB).toEqual(taskNote(onB.id, taskId, 'completed'));
      // The result crossed the database with the change.
      expect(heardOnB.params.result).toMatchObject({
        content: [{ type: 'text', text: 'deployed replicated' }],
      });
      expect(await onA.next!()).toEqual(taskNote(onA.id, taskId, 'completed'));
      const polls = fixture.requests.filter(
        r => r.method === 'tasks/get' && r.taskId === job.taskId,
      );
      expect(polls.length).toBeGreaterThan(0);
      expect(new Set(polls.map(r => r.path))).toEqual(new Set(['/mcp?replica=a']));
      await waitFor(async () => (await leaseOf(taskId)) === null, 'the lease to go');
    } finally {
      await closeStreams();
      await a.stop();
      await b.stop();
      await fixture.close();
    }
  }, 60_000);
});
