/*
 * Long-running tasks, 2025-11-25 client × 2025-11-25 backend (docs/contracts/tasks-and-apps.md
 * §2.7–§2.9, §2.11, §2.12.1, §2.13), through the whole plugin (startTestBackend) with the real
 * tasks fixture (`deploy`, finished by the test; tasks bound to their backend session and
 * credential) and the official SDK 1.x client's task API. Two plugin instances on one database
 * are two replicas: a task started on one is collected on the other after its client session
 * was DELETEd. Every response a client receives is scanned for the backend's own task ids.
 */
import type { AddressInfo } from 'node:net';
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  startTasksServer,
  type LegacyTasksServer,
  type TasksServer,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { randomBytes } from 'node:crypto';
import { mcpBrokerPlugin } from './plugin';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { memorySqlite } from './testing/memorySqlite';
import { startScriptedMcpServer } from './testing/scriptedMcpServer';
import { waitFor } from './testing/waitFor';
import { TASK_LIST_PAGE_SIZE } from './tasks/LegacyTaskRelay';
import { TASKS_TABLE } from './store/DatabaseTaskStore';
import { recordingFetch } from './tasks/__testUtils__/recordingFetch';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';

const SHARED_KEY = randomBytes(32).toString('base64');
const PER_PERSON = 16;
const E1 = { code: -32602, message: 'Failed to retrieve task: Task not found' };

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** Everything every broker answered to a POST, as text (scanned for backend ids). */
const received: Array<Promise<string>> = [];

/**
 * A broker replica with the fixture as `jobs`; on `knex` with `sessionStore: database`; `extra`:
 * more `mcpBroker` keys. The whole backend stops (the broker drains first), as a replica's
 * shutdown does.
 */
const startReplica = (
  fixture: TasksServer,
  auditor: unknown,
  knex?: Knex,
  extra: JsonObject = {},
) =>
  startTaskBroker({
    fixtureUrl: fixture.url,
    auditor,
    revoked,
    knex,
    // These tests count the backend's requests: the watcher, which the clients' GET
    // streams start (plugin.taskNotifications.test.ts), polls nothing while they run.
    tasks: { perPerson: PER_PERSON, minPollInterval: { hours: 1 } },
    extra,
    stopsBackend: true,
  });

describe('tasks through the broker (2025-11-25 client and backend, real tasks fixture)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  let fixture: LegacyTasksServer;
  let broker: { url: URL; stop(): Promise<void> };
  const clients: Client[] = [];

  async function connect(user: string, url = broker.url): Promise<Client> {
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    const transport = new StreamableHTTPClientTransport(url, {
      requestInit: {
        headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
      },
      fetch: recordingFetch(received),
    });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  const startDeploy = (client: Client, target: string, ttl?: number) =>
    client.request(
      {
        method: 'tools/call',
        params: {
          name: 'jobs_deploy',
          arguments: { target },
          task: ttl === undefined ? {} : { ttl },
        },
      },
      CreateTaskResultSchema,
    );

  /** `user`'s `mcp-broker.tool-call` events of `deploy`, once each has ended. */
  async function toolCallEventsOf(user: string) {
    const events = () =>
      audit.filter(
        e =>
          e.meta.principal === `user:default/${user}` &&
          e.meta.tool === 'deploy' &&
          e.meta.operation === undefined,
      );
    await waitFor(() => events().every(e => e.end !== undefined), 'the call events to end');
    return events();
  }

  /** The raw text of one JSON-RPC request on `user`'s session `sessionId`. */
  async function rawPost(user: string, sessionId: string, body: unknown) {
    const response = await fetch(broker.url, {
      method: 'POST',
      headers: {
        Authorization: mockCredentials.user.header(`user:default/${user}`),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, text: await response.text() };
  }

  beforeAll(async () => {
    fixture = await startTasksServer();
    broker = await startReplica(fixture, auditorFactory);
    const probe = await connect('alice');
    await waitFor(
      async () => (await probe.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
      'the tasks fixture to be listed',
    );
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close()));
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('offers the tasks capability and keeps the tools’ task support', async () => {
    const client = await connect('alice');
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    expect(
      tools.filter(t => t.name.startsWith('jobs_')).map(t => [t.name, t.execution?.taskSupport]),
    ).toEqual([
      ['jobs_deploy', 'required'],
      ['jobs_nap', 'optional'],
      ['jobs_approve', 'required'],
      ['jobs_confirm_deploy', 'required'],
    ]);
    // The operator sees that the server supports tasks.
    const status = await fetch(new URL('/api/mcp-broker/status', broker.url), {
      headers: { Authorization: mockCredentials.user.header('user:default/alice') },
    });
    expect((await status.json()).backends).toEqual([
      expect.objectContaining({ name: 'jobs', tasks: { supported: true } }),
    ]);
  });

  it('creates a task under a broker id, then gets it and collects its result; the backend id never reaches the client', async () => {
    const client = await connect('alice');
    const { task } = await startDeploy(client, 'web', 600_000);
    expect(task.taskId).toMatch(/^jobs:[A-Za-z0-9_-]{43}$/);
    expect(task).toMatchObject({ status: 'working', ttl: 600_000 });
    const job = await fixture.started('web');
    expect(job.taskId).not.toBe(task.taskId);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    await fixture.finish('web', 'completed');
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deployed web' }]);
    expect(result._meta?.['io.modelcontextprotocol/related-task']).toEqual({
      taskId: task.taskId,
    });
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find(t => t.taskId === task.taskId)).toMatchObject({
      status: 'completed',
    });
    // The fixture saw only its own id, on the session that created the task: get, get (which
    // saw the end: its final payload is read for the published change), result and the get
    // that records the ended task's state after its result.
    const sent = fixture.requests.filter(
      r => r.method.startsWith('tasks/') && r.taskId === job.taskId,
    );
    expect(sent.map(r => r.method)).toEqual([
      'tasks/get',
      'tasks/get',
      'tasks/result',
      'tasks/result',
      'tasks/get',
    ]);
    expect(new Set(sent.map(r => r.session))).toEqual(new Set([job.session]));
    const texts = await Promise.all(received);
    expect(texts.some(text => text.includes(task.taskId))).toBe(true);
    for (const text of texts) expect(text).not.toContain(job.taskId);
    // One tool-call event ending with the task's ref, and task events that never name the id.
    const taskRef = audit.find(e => e.meta.operation === 'get' && e.meta.tool === 'deploy')?.meta
      .taskRef;
    expect(taskRef).toEqual(expect.any(String));
    expect(audit.filter(e => e.end?.meta.taskRef === taskRef)).toEqual([
      expect.objectContaining({
        meta: expect.not.objectContaining({ operation: expect.anything() }),
        end: expect.objectContaining({
          outcome: 'succeeded',
          meta: expect.objectContaining({ resultType: 'task' }),
        }),
      }),
    ]);
    expect(audit.filter(e => e.meta.taskRef === taskRef).map(e => e.meta.operation)).toEqual(
      expect.arrayContaining(['get', 'result']),
    );
    expect(JSON.stringify(audit)).not.toContain(task.taskId);
  });

  it('records a task as ended when its client only waited on tasks/result, so it stops counting as open', async () => {
    const client = await connect('heidi');
    const { task } = await startDeploy(client, 'quiet');
    await fixture.started('quiet');
    await fixture.finish('quiet', 'completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deployed quiet' }]);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find(t => t.taskId === task.taskId)?.status).toBe('completed');
  });

  it('records a task as ended when its client’s cancel came after its end, so it stops counting as open', async () => {
    const client = await connect('judy');
    const { task } = await startDeploy(client, 'late');
    await fixture.started('late');
    await fixture.finish('late', 'completed');
    // The backend's refusal passes unchanged; the broker reads the task once more.
    const refusal = await client.experimental.tasks.cancelTask(task.taskId).catch(e => e);
    expect(refusal).toMatchObject({ code: -32602 });
    expect(refusal.message).toMatch(/terminal status: completed/);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.find(t => t.taskId === task.taskId)?.status).toBe('completed');
  });

  it('gives a task-augmented call’s tool-call event no taskRef when the backend answered without a task', async () => {
    const client = await connect('ivan');
    // The fixture refuses a deploy without its target: an answer, not a task.
    const answer = await client
      .request(
        { method: 'tools/call', params: { name: 'jobs_deploy', arguments: {}, task: {} } },
        CallToolResultSchema,
      )
      .catch(e => e);
    expect(answer).not.toHaveProperty('task');
    const [call] = await toolCallEventsOf('ivan');
    expect(call.end).toBeDefined();
    expect(JSON.stringify(call)).not.toMatch(/taskRef|resultType/);
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('passes neither the client’s _meta trace context nor its baggage to the backend with a task call', async () => {
    const client = await connect('frank');
    await client.request(
      {
        method: 'tools/call',
        params: {
          name: 'jobs_deploy',
          arguments: { target: 'meta' },
          task: {},
          _meta: {
            baggage: 'user=frank',
            traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
            progressToken: 'p-9',
          },
        },
      },
      CreateTaskResultSchema,
    );
    const job = await fixture.started('meta');
    const call = fixture.requests.find(
      r =>
        r.method === 'tools/call' && r.session === job.session && r.meta?.progressToken === 'p-9',
    );
    expect(call?.meta).toEqual({ progressToken: 'p-9' });
  });

  it('answers another person’s id exactly like an unknown one, and never asks the backend', async () => {
    const alice = await connect('alice');
    const { task } = await startDeploy(alice, 'private');
    const bob = await connect('bob');
    const bobSession = (bob.transport as StreamableHTTPClientTransport).sessionId!;
    const before = fixture.requests.length;
    const foreign = await rawPost('bob', bobSession, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tasks/get',
      params: { taskId: task.taskId },
    });
    const unknown = await rawPost('bob', bobSession, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tasks/get',
      params: { taskId: `jobs:${'A'.repeat(43)}` },
    });
    expect(foreign).toEqual(unknown);
    expect(JSON.parse(foreign.text)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: { ...E1, data: { reason: 'task-not-found' } },
    });
    for (const method of ['tasks/result', 'tasks/cancel']) {
      const refusal = await bob
        .request({ method, params: { taskId: task.taskId } } as any, CallToolResultSchema)
        .catch(e => e);
      expect(refusal).toBeInstanceOf(McpError);
      expect(refusal.code).toBe(E1.code);
    }
    expect(fixture.requests.slice(before).filter(r => r.method.startsWith('tasks/'))).toEqual([]);
    expect(
      audit.filter(e => e.meta.operation === 'get' && e.end?.outcome === 'foreign'),
    ).toHaveLength(1);
  });

  it('answers E1 once tool.use is taken away, and lists the task no more', async () => {
    const erin = await connect('erin');
    const { task } = await startDeploy(erin, 'revocable');
    expect((await erin.experimental.tasks.listTasks()).tasks.map(t => t.taskId)).toEqual([
      task.taskId,
    ]);
    revoked.add('user:default/erin');
    try {
      const refusal = await waitFor(
        () =>
          erin.experimental.tasks.getTask(task.taskId).then(
            () => undefined,
            e => e,
          ),
        'the revocation to reach the decision cache',
      );
      expect(refusal).toBeInstanceOf(McpError);
      expect(refusal.code).toBe(E1.code);
      expect(refusal.message).toContain(E1.message);
      expect((await erin.experimental.tasks.listTasks()).tasks).toEqual([]);
      expect(audit.some(e => e.meta.operation === 'get' && e.end?.outcome === 'denied')).toBe(true);
    } finally {
      revoked.delete('user:default/erin');
    }
    // Revocation may be temporary: the task was not cancelled and is back.
    const back = await waitFor(
      () => erin.experimental.tasks.getTask(task.taskId).catch(() => undefined),
      'the restored decision to reach the decision cache',
    );
    expect(back?.status).toBe('working');
  });

  it('refuses the open task beyond mcpBroker.tasks.perPerson with HTTP 429, before the backend', async () => {
    const carol = await connect('carol');
    for (let i = 0; i < PER_PERSON; i += 1) await startDeploy(carol, `carol-${i}`);
    const before = fixture.requests.length;
    const sessionId = (carol.transport as StreamableHTTPClientTransport).sessionId!;
    const refused = await rawPost('carol', sessionId, {
      jsonrpc: '2.0',
      id: 99,
      method: 'tools/call',
      params: { name: 'jobs_deploy', arguments: { target: 'carol-over' }, task: {} },
    });
    expect(refused.status).toBe(429);
    expect(JSON.parse(refused.text).error).toEqual({
      code: -32000,
      message: `Open task limit reached: ${PER_PERSON} open tasks per person (mcpBroker.tasks.perPerson); wait for one to finish or cancel one with tasks/cancel`,
      data: { reason: 'task-limit', limit: PER_PERSON },
    });
    expect(fixture.requests.slice(before)).toEqual([]);
    // No task was created: the refused call's tool-call event names none.
    const calls = await toolCallEventsOf('carol');
    expect(calls).toHaveLength(PER_PERSON + 1);
    expect(calls.filter(e => e.end?.meta.resultType === 'task')).toHaveLength(PER_PERSON);
    const refusedCall = calls.filter(e => e.end?.outcome === 'failed');
    expect(refusedCall).toHaveLength(1);
    expect(JSON.stringify(refusedCall[0])).not.toMatch(/taskRef|resultType/);
    // A cancelled task frees its slot.
    const { tasks } = await carol.experimental.tasks.listTasks();
    expect((await carol.experimental.tasks.cancelTask(tasks[0].taskId)).status).toBe('cancelled');
    expect((await startDeploy(carol, 'carol-after')).task.status).toBe('working');
  });

  it('names a task by its broker id where the backend’s error names its own (a cancelled task’s tasks/result)', async () => {
    const judy = await connect('judy');
    const { task } = await startDeploy(judy, 'judy-cancelled');
    const job = await fixture.started('judy-cancelled');
    expect((await judy.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    const sessionId = (judy.transport as StreamableHTTPClientTransport).sessionId!;
    const answer = await rawPost('judy', sessionId, {
      jsonrpc: '2.0',
      id: 7,
      method: 'tasks/result',
      params: { taskId: task.taskId },
    });
    // The backend's own words, with the id the client knows in place of the backend's.
    expect(answer.text).toContain(task.taskId);
    expect(answer.text).not.toContain(job.taskId);
    expect(answer.text).toMatch(/-32603/);
  });

  it('pages tasks/list with the broker’s cursors and refuses a cursor it did not make', async () => {
    const dave = await connect('dave');
    const made: string[] = [];
    for (let i = 0; i < TASK_LIST_PAGE_SIZE + 5; i += 1) {
      const { task } = await dave.request(
        { method: 'tools/call', params: { name: 'jobs_nap', task: {} } },
        CreateTaskResultSchema,
      );
      made.push(task.taskId);
    }
    const first = await dave.experimental.tasks.listTasks();
    expect(first.tasks).toHaveLength(TASK_LIST_PAGE_SIZE);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await dave.experimental.tasks.listTasks(first.nextCursor);
    expect(second.nextCursor).toBeUndefined();
    expect([...first.tasks, ...second.tasks].map(t => t.taskId).sort()).toEqual(made.sort());
    const refusal = await dave.experimental.tasks.listTasks('not-ours').catch(e => e);
    expect(refusal).toBeInstanceOf(McpError);
    expect(refusal.code).toBe(-32602);
    expect(refusal.message).toContain('Invalid cursor');
  });

  it('answers E3 for a task whose backend session the backend forgot, and forgets the task', async () => {
    const client = await connect('grace');
    const { task } = await startDeploy(client, 'lost');
    const lost = await fixture.started('lost');
    const connectedAt = async () => {
      const response = await fetch(new URL('/api/mcp-broker/status', broker.url), {
        headers: { Authorization: mockCredentials.user.header('user:default/grace') },
      });
      const backend = (await response.json()).backends?.[0];
      return backend?.state === 'connected' ? String(backend.lastConnectedAt) : undefined;
    };
    const before = await connectedAt();
    // Last in this block: every session ends, the broker's own catalog session too.
    await fixture.forgetSessions();
    const refusal = await client.experimental.tasks.getTask(task.taskId).catch(e => e);
    expect(refusal).toBeInstanceOf(McpError);
    expect(refusal).toMatchObject({
      code: -32602,
      data: { reason: 'task-lost', server: 'jobs' },
    });
    // The row went with it: the id is unknown now.
    const again = await client.experimental.tasks.getTask(task.taskId).catch(e => e);
    expect(again).toMatchObject({ code: -32602, data: { reason: 'task-not-found' } });
    // Once the broker has its own session again (it relays tasks to backends that declared
    // them), a new task call replaces the forgotten pinned session: one retry, nothing ran.
    await waitFor(async () => {
      const now = await connectedAt();
      return now !== undefined && now !== before;
    }, 'the broker to reconnect to the fixture');
    const next = await startDeploy(client, 'found');
    expect(next.task.status).toBe('working');
    expect((await fixture.started('found')).session).not.toBe(lost.session);
  });
});

describe('an expired task (mcpBroker.tasks.maxTtl: 1 s, the backend keeps it 10 minutes)', () => {
  // The broker's cap ends the task first, so the backend still has it: what the owner hears is
  // the broker's own E2 (a backend ttl as short would race it to E3, "no longer has it").
  it('tells the owner that it expired (E2), and anybody else that it is not found', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const broker = await startReplica(fixture, factory, undefined, {
      tasks: { perPerson: PER_PERSON, minPollInterval: { hours: 1 }, maxTtl: { seconds: 1 } },
    });
    const clients: Client[] = [];
    const connect = async (user: string) => {
      const client = new Client({ name: 'tasks-test', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(broker.url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header(`user:default/${user}`) },
          },
        }),
      );
      clients.push(client);
      return client;
    };
    try {
      const frank = await connect('frank');
      await waitFor(
        async () => (await frank.listTools()).tools.some(tool => tool.name === 'jobs_deploy'),
        'the tasks fixture to be listed',
      );
      const { task } = await frank.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'brief' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      expect(task.ttl).toBe(1000);
      const expired = await waitFor(
        () =>
          frank.experimental.tasks.getTask(task.taskId).then(
            () => undefined,
            e => e,
          ),
        'the task to expire at the broker',
      );
      expect(expired).toBeInstanceOf(McpError);
      expect(expired.code).toBe(-32602);
      expect(expired.message).toContain('Failed to retrieve task: Task has expired');
      expect(expired.data).toEqual({ reason: 'task-expired' });
      const bob = await connect('bob');
      const foreign = await bob.experimental.tasks.getTask(task.taskId).catch(e => e);
      expect(foreign.message).toContain(E1.message);
    } finally {
      await Promise.all(clients.map(client => client.close()));
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

describe('tasks switched off (mcpBroker.tasks.enabled: false)', () => {
  it('offers no tasks capability, runs a task-augmented call as a plain call and finds no tasks/* method', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        factory,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'jobs', url: fixture.url }],
              tasks: { enabled: false },
            },
          },
        }),
      ],
    });
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker/mcp`),
        ),
      );
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'jobs_nap'),
        'the tasks fixture to be listed',
      );
      expect(client.getServerCapabilities()?.tasks).toBeUndefined();
      // No tool offers what the broker does not relay.
      for (const tool of (await client.listTools()).tools) expect(tool.execution).toBeUndefined();
      const plain = await client.request(
        { method: 'tools/call', params: { name: 'jobs_nap', task: {} } },
        CallToolResultSchema,
      );
      expect(plain.content).toEqual([{ type: 'text', text: 'napped' }]);
      const missing = await client.experimental.tasks.getTask('jobs:x').catch(e => e);
      expect(missing).toBeInstanceOf(McpError);
      expect(missing.code).toBe(-32601);
      // E5 for any tasks/*, a malformed one too: the method is not there to check params for.
      const malformed = await client
        .request({ method: 'tasks/get', params: { taskId: 42 } } as any, CallToolResultSchema)
        .catch(e => e);
      expect(malformed).toMatchObject({ code: -32601 });
    } finally {
      await client.close();
      await server.stop?.();
      await fixture.close();
    }
  }, 60_000);
});

describe('a task outlives its client session across replicas (two plugin instances, one database)', () => {
  it('is started on A, its session DELETEd, and collected on B after the job finished', async () => {
    const fixture = await startTasksServer();
    const knex = memorySqlite();
    const { factory } = recordingAuditor();
    const a = await startReplica(fixture, factory, knex);
    const b = await startReplica(fixture, factory, knex);
    const clients: Client[] = [];
    const connect = async (url: URL) => {
      const client = new Client({ name: 'tasks-test', version: '1.0.0' });
      const transport = new StreamableHTTPClientTransport(url, {
        requestInit: {
          headers: { Authorization: mockCredentials.user.header('user:default/alice') },
        },
      });
      await client.connect(transport);
      clients.push(client);
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
        'the tasks fixture to be listed',
      );
      return { client, transport };
    };
    try {
      const onA = await connect(a.url);
      const { task } = await onA.client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'shared' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const job = await fixture.started('shared');
      await onA.transport.terminateSession();
      await onA.client.close();

      const onB = await connect(b.url);
      expect((await onB.client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
      await fixture.finish('shared', 'completed');
      expect((await onB.client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
      const result = await onB.client.experimental.tasks.getTaskResult(
        task.taskId,
        CallToolResultSchema,
      );
      expect(result.content).toEqual([{ type: 'text', text: 'deployed shared' }]);
      // B reached the backend session that created the task (A's, pinned, never DELETEd).
      const fromB = fixture.requests.filter(r => r.taskId === job.taskId);
      expect(fromB.map(r => r.session)).toEqual(fromB.map(() => job.session));
    } finally {
      await Promise.all(clients.map(client => client.close()));
      await a.stop();
      await b.stop();
      await fixture.close();
      await knex.destroy();
    }
  }, 60_000);
});

describe('a tasks/result cut by the shutdown', () => {
  it('answers -32000 shutting-down, retryable, naming the server, once the drain deadline passed', async () => {
    const fixture = await startTasksServer();
    const { factory } = recordingAuditor();
    const replica = await startReplica(fixture, factory, undefined, {
      shutdownDrainTimeout: { milliseconds: 200 },
    });
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    let stopped: Promise<void> | undefined;
    try {
      await client.connect(
        new StreamableHTTPClientTransport(replica.url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/alice') },
          },
        }),
      );
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
        'the tasks fixture to be listed',
      );
      const { task } = await client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'draining' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const job = await fixture.started('draining');
      // The job never finishes: the client's wait is cut by the broker's shutdown.
      const outcome = client.experimental.tasks
        .getTaskResult(task.taskId, CallToolResultSchema, { timeout: 120_000 })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      await waitFor(
        () => fixture.requests.some(r => r.method === 'tasks/result' && r.taskId === job.taskId),
        'the tasks/result at the backend',
      );
      stopped = replica.stop();
      const error = await outcome;
      expect(error).toBeInstanceOf(McpError);
      expect(error).toMatchObject({
        code: -32000,
        message: expect.stringMatching(/shutting down .*MCP server "jobs".*may be retried/),
        data: { backend: 'jobs', reason: 'shutting-down', retryable: true },
      });
    } finally {
      await stopped;
      await client.close();
      await fixture.close();
    }
  }, 60_000);
});

describe('a backend without the tasks capability beside one with it', () => {
  it('lists its tools without execution.taskSupport, shows it on /status, and runs a task-augmented call plain', async () => {
    const fixture = await startTasksServer();
    const plain = await startScriptedMcpServer({
      tools: ['build'],
      toolFields: { build: { execution: { taskSupport: 'optional' } } },
    });
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [
                { name: 'jobs', url: fixture.url },
                { name: 'plain', url: plain.url },
              ],
            },
          },
        }),
      ],
    });
    const url = new URL(
      `http://127.0.0.1:${(backend.server.address() as AddressInfo).port}/api/mcp-broker/mcp`,
    );
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(url, {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/alice') },
          },
        }),
      );
      const tools = await waitFor(async () => {
        const listed = (await client.listTools()).tools;
        const names = listed.map(t => t.name);
        return names.includes('plain_build') && names.includes('jobs_nap') ? listed : undefined;
      }, 'both servers to be listed');
      expect(tools!.find(t => t.name === 'plain_build')).not.toHaveProperty('execution');
      expect(tools!.find(t => t.name === 'jobs_nap')?.execution).toEqual({
        taskSupport: 'optional',
      });
      const status = await fetch(new URL('/api/mcp-broker/status', url), {
        headers: { Authorization: mockCredentials.user.header('user:default/alice') },
      });
      expect(
        (await status.json()).backends.map((b: { name: string; tasks: unknown }) => [
          b.name,
          b.tasks,
        ]),
      ).toEqual([
        ['jobs', { supported: true }],
        ['plain', { supported: false }],
      ]);
      const answer = await client.request(
        { method: 'tools/call', params: { name: 'plain_build', arguments: {}, task: {} } },
        CallToolResultSchema,
      );
      expect(answer).not.toHaveProperty('task');
      expect(plain.toolCallMetas()).toHaveLength(1);
    } finally {
      await client.close();
      await backend.stop();
      await plain.close();
      await fixture.close();
    }
  }, 60_000);
});

describe('a removed server’s tasks', () => {
  it('are deleted when the server is removed, not at their next use', async () => {
    const fixture = await startTasksServer();
    const knex = memorySqlite();
    const rootConfig = mockServices.rootConfig({ data: {} });
    const setServers = (servers: Array<{ name: string; url: string }>) =>
      rootConfig.update({
        data: {
          mcpBroker: {
            servers,
            sessionStore: 'database',
            credentialEncryptionKey: SHARED_KEY,
          },
        },
      });
    setServers([{ name: 'jobs', url: fixture.url }]);
    const backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.database.factory({ knex }),
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
      ],
    });
    const client = new Client({ name: 'tasks-test', version: '1.0.0' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(
            `http://127.0.0.1:${(backend.server.address() as AddressInfo).port}/api/mcp-broker/mcp`,
          ),
          {
            requestInit: {
              headers: { Authorization: mockCredentials.user.header('user:default/alice') },
            },
          },
        ),
      );
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
        'the tasks fixture to be listed',
      );
      const { task } = await client.request(
        {
          method: 'tools/call',
          params: { name: 'jobs_deploy', arguments: { target: 'removed' }, task: {} },
        },
        CreateTaskResultSchema,
      );
      const rowOf = () => knex(TASKS_TABLE).where('task_id', task.taskId).first();
      expect(await rowOf()).toBeDefined();
      setServers([]);
      await waitFor(async () => (await rowOf()) === undefined, 'the removed server’s rows to go');
      // Back under the same name and URL: the id stays unknown.
      setServers([{ name: 'jobs', url: fixture.url }]);
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'jobs_deploy'),
        'the tasks fixture to be listed again',
      );
      const refusal = await client.experimental.tasks.getTask(task.taskId).catch(e => e);
      expect(refusal).toMatchObject({ code: -32602, data: { reason: 'task-not-found' } });
    } finally {
      await client.close();
      await backend.stop();
      await fixture.close();
      await knex.destroy();
    }
  }, 60_000);
});
