/*
 * Long-running tasks, 2025-11-25 client × 2026-07-28 backend (docs/contracts/tasks-and-apps.md
 * §2.12.3, the status mapping of §2.12): through the whole plugin (startTestBackend) with the real
 * modern tasks fixture (`deploy` finished by the test, `failing_job`, `protocol_error_job`) and
 * the official SDK 1.x client's task API. The broker declares the extension on the task call,
 * answers the legacy `CreateTaskResult`, maps the modern `tasks/get`, emulates `tasks/result` by
 * polling and refuses to cancel an ended task (E8); the client's GET stream hears of the task's
 * end (§2.10: the watcher polls the modern backend). Two plugin instances on one database (SQLite
 * and PostgreSQL) are two replicas: a task created on one is collected on the other. Every answer
 * a client receives is scanned for the backend's own task ids (the fixture's start `fixture-`).
 */
import { mockCredentials } from '@backstage/backend-test-utils';
import {
  MODERN_TASK_TTL_MS,
  startModernTasksServer,
  TASKS_EXTENSION,
  type ModernTasksServer,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  TaskStatusNotificationSchema,
  type TaskStatusNotification,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { withModernEnvelope } from './backend/ModernChannel';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { taskRefOf } from './tasks/TaskAuditor';
import { recordingFetch } from './tasks/__testUtils__/recordingFetch';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const BROKER_TASK_ID = /^jobs:[A-Za-z0-9_-]{43}$/;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** Everything every broker answered to a POST, as text (scanned for backend ids). */
const received: Array<Promise<string>> = [];

/** A broker replica with the modern fixture as `jobs`; on `knex` with `sessionStore: database`. */
const startReplica = (
  fixture: ModernTasksServer,
  auditor: unknown,
  knex?: Knex,
  tasks: JsonObject = {},
) =>
  startTaskBroker({
    fixtureUrl: fixture.url,
    auditor,
    revoked,
    knex,
    tasks: { minPollInterval: { milliseconds: 20 }, ...tasks },
  });

const clients: Client[] = [];

/** A 2025-11-25 SDK client of `user` on `url`, once the fixture's tools are listed. */
async function connect(user: string, url: URL): Promise<Client> {
  const client = new Client({ name: 'tasks-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: {
      headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
    },
    fetch: recordingFetch(received),
  });
  await client.connect(transport);
  clients.push(client);
  await waitFor(
    async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
    'the modern tasks fixture to be listed',
  );
  return client;
}

/** A task-augmented call of `tool`. */
const startTask = (
  client: Client,
  tool: string,
  args: Record<string, unknown> = {},
  ttl?: number,
) =>
  client.request(
    {
      method: 'tools/call',
      params: {
        name: `jobs_${tool}`,
        arguments: args,
        task: ttl === undefined ? {} : { ttl },
      },
    },
    CreateTaskResultSchema,
  );

describe('tasks through the broker (2025-11-25 client, 2026-07-28 backend, real modern tasks fixture)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  let fixture: ModernTasksServer;
  let broker: { url: URL; stop(): Promise<void> };

  beforeAll(async () => {
    fixture = await startModernTasksServer();
    broker = await startReplica(fixture, auditorFactory);
    // The backend is connected (a later session's initialize sees its capabilities).
    await connect('alice', broker.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close()));
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('offers the tasks capability and optional task support for a backend that declares the extension', async () => {
    const client = await connect('alice', broker.url);
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    // The backend decides per call: every tool may run as a task.
    const { tools } = await client.listTools();
    const deploy = tools.find(tool => tool.name === 'jobs_deploy');
    expect(deploy?.execution?.taskSupport).toBe('optional');
    expect(tools.every(tool => tool.execution?.taskSupport === 'optional')).toBe(true);
  });

  it('creates a task with the extension declared, gets it as a legacy Task and collects its result', async () => {
    const client = await connect('alice', broker.url);
    const { task } = await startTask(client, 'deploy', { target: 'web' });
    expect(task.taskId).toMatch(BROKER_TASK_ID);
    expect(task).toMatchObject({ status: 'working', ttl: MODERN_TASK_TTL_MS });
    expect(task).not.toHaveProperty('ttlMs');
    const job = await fixture.started('web');
    const sent = fixture.requests.find(
      r => r.method === 'tools/call' && r.credential === job.credential && r.meta,
    );
    expect((sent?.meta?.['io.modelcontextprotocol/clientCapabilities'] as any)?.extensions).toEqual(
      expect.objectContaining({ [TASKS_EXTENSION]: {} }),
    );
    const working = await client.experimental.tasks.getTask(task.taskId);
    expect(working).toMatchObject({ taskId: task.taskId, status: 'working' });
    expect(working).not.toHaveProperty('resultType');
    // tasks/result waits (the broker polls the backend) until the test finishes the job.
    const collected = client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    await fixture.finish('web', 'completed');
    const result = await collected;
    expect(result.content).toEqual([{ type: 'text', text: 'deployed web' }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find(t => t.taskId === task.taskId)?.status).toBe('completed');
    // One tool-call event naming the task by its ref; task events with both eras.
    const ref = taskRefOf(task.taskId);
    expect(audit.filter(e => e.end?.meta.taskRef === ref)).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ tool: 'deploy' }),
        end: expect.objectContaining({ meta: expect.objectContaining({ resultType: 'task' }) }),
      }),
    ]);
    const gotten = audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get');
    expect(gotten.length).toBeGreaterThan(0);
    for (const event of gotten) {
      expect(event.meta).toEqual(
        expect.objectContaining({ clientEra: 'legacy', backendEra: 'modern' }),
      );
    }
  });

  it('shows a tool error as failed with its result, and a protocol error as failed with its error', async () => {
    const client = await connect('alice', broker.url);
    const failing = (await startTask(client, 'failing_job')).task;
    const result = await client.experimental.tasks.getTaskResult(
      failing.taskId,
      CallToolResultSchema,
    );
    expect(result).toMatchObject({ isError: true });
    expect((await client.experimental.tasks.getTask(failing.taskId)).status).toBe('failed');
    const crashing = (await startTask(client, 'protocol_error_job')).task;
    await expect(
      client.experimental.tasks.getTaskResult(crashing.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('the job crashed') });
    expect((await client.experimental.tasks.getTask(crashing.taskId)).status).toBe('failed');
  });

  it('cancels a working task, and refuses to cancel an ended one (E8)', async () => {
    const client = await connect('alice', broker.url);
    const { task } = await startTask(client, 'deploy', { target: 'stop' });
    await fixture.started('stop');
    const cancelled = await client.experimental.tasks.cancelTask(task.taskId);
    expect(cancelled.taskId).toBe(task.taskId);
    expect(fixture.requests.some(r => r.method === 'tasks/cancel')).toBe(true);
    await waitFor(
      async () => (await client.experimental.tasks.getTask(task.taskId)).status === 'cancelled',
      'the task to be cancelled',
    );
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(
        "Cannot cancel task: already in terminal status 'cancelled'",
      ),
      data: { reason: 'task-terminal' },
    });
    await expect(
      client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema),
    ).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('Task was cancelled'),
    });
  });

  it('holds an immediate answer as a completed task the broker made, answered from its row', async () => {
    const client = await connect('alice', broker.url);
    const calls = fixture.requests.filter(r => r.method === 'tools/call').length;
    const { task } = await startTask(client, 'nap', {}, 5_000);
    expect(task.taskId).toMatch(BROKER_TASK_ID);
    expect(task).toMatchObject({ status: 'completed', ttl: 5_000 });
    const asked = fixture.requests.length;
    expect(await client.experimental.tasks.getTask(task.taskId)).toMatchObject({
      taskId: task.taskId,
      status: 'completed',
    });
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'napped' }]);
    expect(result._meta?.[RELATED_TASK]).toEqual({ taskId: task.taskId });
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining(
        "Cannot cancel task: already in terminal status 'completed'",
      ),
      data: { reason: 'task-terminal' },
    });
    // A 2026-07-28 client of the same person sees it completed with the result inlined.
    const modernGet = async (method: string) => {
      const response = await fetch(broker.url, {
        method: 'POST',
        headers: {
          Authorization: mockCredentials.user.header('user:default/alice'),
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2026-07-28',
          'Mcp-Method': method,
          'Mcp-Name': task.taskId,
        },
        body: JSON.stringify(
          withModernEnvelope(
            { jsonrpc: '2.0', id: 1, method, params: { taskId: task.taskId } },
            { extensions: { [TASKS_EXTENSION]: {} } },
          ),
        ),
      });
      return response.json();
    };
    expect((await modernGet('tasks/get')).result).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'completed',
      ttlMs: 5_000,
      result: { content: [{ type: 'text', text: 'napped' }] },
    });
    expect((await modernGet('tasks/cancel')).result).toMatchObject({ resultType: 'complete' });
    // One call reached the backend; nothing else did.
    expect(fixture.requests.filter(r => r.method === 'tools/call').length).toBe(calls + 1);
    expect(fixture.requests.length).toBe(asked);
    // Another person: unknown.
    const bob = await connect('bob', broker.url);
    await expect(bob.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Task not found'),
    });
  });

  it('answers another person’s id like an unknown one', async () => {
    const alice = await connect('alice', broker.url);
    const bob = await connect('bob', broker.url);
    const { task } = await startTask(alice, 'deploy', { target: 'mine' });
    await fixture.started('mine');
    await expect(bob.experimental.tasks.getTask(task.taskId)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Task not found'),
    });
    await fixture.finish('mine', 'completed');
  });

  it('never showed a client the backend’s own task ids (runs last)', async () => {
    const texts = await Promise.all(received);
    expect(texts.length).toBeGreaterThan(0);
    for (const text of texts) expect(text).not.toContain('fixture-');
  });
});

describe('status notifications of a 2026-07-28 backend’s task on a 2025-11-25 GET stream', () => {
  it('tells the owner’s GET stream of the task’s end once: the watcher polls the modern backend', async () => {
    const fixture = await startModernTasksServer();
    const broker = await startReplica(fixture, recordingAuditor().factory);
    const openStreams = async () => {
      const response = await fetch(new URL('/api/mcp-broker/status', broker.url), {
        headers: { Authorization: mockCredentials.user.header('user:default/admin') },
      });
      return (await response.json()).clients.eventStreams;
    };
    const notes: TaskStatusNotification['params'][] = [];
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    client.setNotificationHandler(TaskStatusNotificationSchema, async notification => {
      notes.push(notification.params);
    });
    const heard = (taskId: string, status: string) =>
      waitFor(
        () => notes.find(note => note.taskId === taskId && note.status === status),
        `the GET stream to hear that ${taskId} is ${status}`,
      );
    try {
      await client.connect(
        new StreamableHTTPClientTransport(broker.url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/gina') },
          },
        }),
      );
      await waitFor(
        async () => (await client.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
        'the modern tasks fixture to be listed',
      );
      await waitFor(async () => (await openStreams()) === 1, 'the GET stream to open');
      const { task } = await startTask(client, 'deploy', { target: 'noticed' });
      expect(task.taskId).toMatch(BROKER_TASK_ID);
      await fixture.started('noticed');
      await fixture.finish('noticed', 'completed');
      expect(await heard(task.taskId, 'completed')).toMatchObject({ taskId: task.taskId });
      // A later task's end comes behind anything more of the first one; it ends with a tool
      // error, `completed` with `isError` at the modern backend: `failed` to a 2025-11-25 stream.
      const later = (await startTask(client, 'deploy', { target: 'later' })).task;
      await fixture.started('later');
      await fixture.finish('later', 'failed');
      await heard(later.taskId, 'failed');
      // Its end was told once, and never as `completed`.
      expect(
        notes.filter(note => note.taskId === later.taskId && note.status !== 'working'),
      ).toEqual([expect.objectContaining({ status: 'failed' })]);
      expect(
        notes.filter(note => note.taskId === task.taskId && note.status === 'completed'),
      ).toHaveLength(1);
      expect(JSON.stringify(notes)).not.toContain('fixture-');
    } finally {
      await client.close();
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

describe('an immediate answer too large to hold (mcpBroker.tasks.maxStoredResultBytes: 10)', () => {
  it('answers E10 and keeps no task', async () => {
    const fixture = await startModernTasksServer();
    const { factory } = recordingAuditor();
    const broker = await startReplica(fixture, factory, undefined, {
      maxStoredResultBytes: 10,
    });
    try {
      const client = await connect('alice', broker.url);
      await expect(startTask(client, 'nap')).rejects.toMatchObject({
        code: -32603,
        message: expect.stringMatching(
          /MCP server "jobs" answered at once with \d+ bytes, more than a task can hold \(mcpBroker\.tasks\.maxStoredResultBytes\); call the tool without a task$/,
        ),
        data: { reason: 'task-result-too-large' },
      });
      expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
    } finally {
      await Promise.all(clients.splice(0).map(client => client.close()));
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

describe('the per-person bound (mcpBroker.tasks.perPerson: 1)', () => {
  it('refuses a task call beyond it with HTTP 429 (E7) before anything reaches the backend', async () => {
    const fixture = await startModernTasksServer();
    const { factory } = recordingAuditor();
    const broker = await startReplica(fixture, factory, undefined, { perPerson: 1 });
    try {
      const client = await connect('alice', broker.url);
      await startTask(client, 'deploy', { target: 'first' });
      await fixture.started('first');
      const calls = fixture.requests.filter(r => r.method === 'tools/call').length;
      const response = await fetch(broker.url, {
        method: 'POST',
        headers: {
          Authorization: mockCredentials.user.header('user:default/alice'),
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'Mcp-Session-Id': (client.transport as StreamableHTTPClientTransport).sessionId!,
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 7,
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'second' }, task: {} },
        }),
      });
      expect(response.status).toBe(429);
      expect((await response.json()).error).toEqual({
        code: -32000,
        message:
          'Open task limit reached: 1 open tasks per person (mcpBroker.tasks.perPerson); wait for one to finish or cancel one with tasks/cancel',
        data: { reason: 'task-limit', limit: 1 },
      });
      expect(fixture.requests.filter(r => r.method === 'tools/call').length).toBe(calls);
      await fixture.finish('first', 'completed');
    } finally {
      await Promise.all(clients.splice(0).map(client => client.close()));
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

const { engines } = replicaDatabases('legacy client × modern backend tasks across replicas');

describe.each(engines)(
  'a 2025-11-25 client’s task on a 2026-07-28 backend across replicas (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);

    it('is created on A and collected on B', async () => {
      const fixture = await startModernTasksServer();
      const { factory } = recordingAuditor();
      const a = await startReplica(fixture, factory, knexes[0]);
      const b = await startReplica(fixture, factory, knexes[1]);
      try {
        const onA = await connect('alice', a.url);
        const onB = await connect('alice', b.url);
        const { task } = await startTask(onA, 'deploy', { target: 'shared' });
        await fixture.started('shared');
        expect((await onB.experimental.tasks.getTask(task.taskId)).status).toBe('working');
        await fixture.finish('shared', 'completed');
        const result = await onB.experimental.tasks.getTaskResult(
          task.taskId,
          CallToolResultSchema,
        );
        expect(result.content).toEqual([{ type: 'text', text: 'deployed shared' }]);
        for (const text of await Promise.all(received)) expect(text).not.toContain('fixture-');
      } finally {
        await Promise.all(clients.splice(0).map(client => client.close()));
        await a.stop();
        await b.stop();
        await fixture.close();
      }
    }, 60_000);
  },
);
