/*
 * Long-running tasks, 2026-07-28 client × 2025-11-25 backend (docs/contracts/tasks-and-apps.md
 * §2.12.4, the status mapping of §2.12): through the whole plugin (startTestBackend) with the real
 * legacy tasks fixture (`deploy`, `taskSupport: required`, finished by the test; `nap`,
 * `optional`, done at once) and a stateless client speaking raw 2026-07-28 HTTP. The broker adds
 * `params.task` for the client, turns the legacy `CreateTaskResult` into the flat
 * `resultType: "task"` answer, and answers `tasks/get` and `tasks/cancel` from the legacy ones
 * on the task's pinned backend session. Two plugin instances on one database (SQLite and
 * PostgreSQL) are two replicas: a task created on one is collected on the other. Every answer a
 * client receives is scanned for the backend's own task ids.
 */
import {
  DEFAULT_TASK_TTL_MS,
  startTasksServer,
  TASK_POLL_INTERVAL_MS,
  TASKS_EXTENSION,
  type LegacyTasksServer,
} from '@internal/test-mcp-backends';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { taskRefOf } from './tasks/TaskAuditor';
import { waitFor } from './testing/waitFor';
import { modernRequest } from './tasks/__testUtils__/modernRequest';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';

const E1 = {
  code: -32602,
  message: 'Failed to retrieve task: Task not found',
  data: { reason: 'task-not-found' },
};
const BROKER_TASK_ID = /^jobs:[A-Za-z0-9_-]{43}$/;
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** Everything every broker answered, as text (scanned for the backend's ids). */
const received: string[] = [];

/** A broker replica with the legacy fixture as `jobs`; on `knex` with `sessionStore: database`. */
const startReplica = (fixture: LegacyTasksServer, auditor: unknown, knex?: Knex) =>
  startTaskBroker({ fixtureUrl: fixture.url, auditor, revoked, knex });

/**
 * One 2026-07-28 request of `user` to `url`, the extension declared unless `capabilities` say
 * otherwise; its answer goes to `received` too.
 */
const modern = (
  url: URL,
  user: string,
  method: string,
  params: Record<string, unknown>,
  capabilities?: Record<string, unknown>,
) => modernRequest(url, user, method, params, { capabilities, received });

/** The client's calls of one broker. */
function clientOf(url: () => URL) {
  const call = (
    user: string,
    tool: string,
    args: Record<string, unknown> = {},
    capabilities?: Record<string, unknown>,
  ) => modern(url(), user, 'tools/call', { name: `jobs_${tool}`, arguments: args }, capabilities);
  const get = (user: string, taskId: string) => modern(url(), user, 'tasks/get', { taskId });
  const cancel = (user: string, taskId: string) => modern(url(), user, 'tasks/cancel', { taskId });
  return { call, get, cancel };
}

/** Waits until `url` lists the fixture's tools to 2026-07-28 clients. */
async function listed(url: URL) {
  await waitFor(async () => {
    const { message } = await modern(url, 'alice', 'tools/list', {});
    return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
  }, 'the legacy tasks fixture to be listed');
}

describe('tasks through the broker (2026-07-28 client, 2025-11-25 backend, real legacy tasks fixture)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  let fixture: LegacyTasksServer;
  let broker: { url: URL; stop(): Promise<void> };
  const { call, get, cancel } = clientOf(() => broker.url);
  /** The backend's own ids of every task started here (never shown to a client). */
  const backendIds: string[] = [];

  beforeAll(async () => {
    fixture = await startTasksServer();
    broker = await startReplica(fixture, auditorFactory);
    await listed(broker.url);
  }, 60_000);

  afterAll(async () => {
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('offers the tasks extension in server/discover for a backend with the 2025-11-25 capability', async () => {
    const { message } = await modern(broker.url, 'alice', 'server/discover', {});
    expect(message.result.capabilities.extensions).toEqual(
      expect.objectContaining({ [TASKS_EXTENSION]: {} }),
    );
  });

  it('creates a legacy task for a declaring client and answers it as a 2026-07-28 task; tasks/get polls it to completed with the result inlined', async () => {
    const created = await call('alice', 'deploy', { target: 'web' });
    expect(created.status).toBe(200);
    const task = created.message.result;
    expect(task).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: DEFAULT_TASK_TTL_MS,
      pollIntervalMs: TASK_POLL_INTERVAL_MS,
    });
    expect(task.taskId).toMatch(BROKER_TASK_ID);
    expect(task).not.toHaveProperty('ttl');
    expect(task).not.toHaveProperty('task');
    expect(task._meta?.[RELATED_TASK]).toBeUndefined();
    const job = await fixture.started('web');
    backendIds.push(job.taskId);
    expect(job.taskId).not.toBe(task.taskId);

    const working = await get('alice', task.taskId);
    expect(working.message.result).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'working',
      ttlMs: DEFAULT_TASK_TTL_MS,
    });
    expect(working.message.result).not.toHaveProperty('result');

    await fixture.finish('web', 'completed');
    const done = await waitFor(async () => {
      const { message } = await get('alice', task.taskId);
      return message.result?.status === 'completed' ? message.result : undefined;
    }, 'the task to complete');
    expect(done).toMatchObject({
      taskId: task.taskId,
      result: { content: [{ type: 'text', text: 'deployed web' }] },
    });
    expect(done.result.isError).not.toBe(true);
    expect(done.result._meta?.[RELATED_TASK]).toBeUndefined();
    expect(done._meta?.[RELATED_TASK]).toBeUndefined();
    // The backend got the legacy task requests with its own id, on the session that made it.
    const gets = fixture.requests.filter(r => r.method === 'tasks/get');
    expect(gets.length).toBeGreaterThan(0);
    expect(gets.every(r => r.taskId === job.taskId && r.session === job.session)).toBe(true);
    expect(fixture.requests.some(r => r.method === 'tasks/result' && r.taskId === job.taskId)).toBe(
      true,
    );
    // One tool-call event naming the task by its ref.
    const ref = taskRefOf(task.taskId);
    expect(audit.filter(e => e.end?.meta.taskRef === ref)).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ tool: 'deploy' }),
        end: expect.objectContaining({ meta: expect.objectContaining({ resultType: 'task' }) }),
      }),
    ]);
    // Its operations are audited with both eras, one event each: a get that inlined the legacy
    // tasks/result is no `result` operation.
    const operations = audit.filter(e => e.meta.taskRef === ref && e.meta.operation !== undefined);
    expect(operations.filter(e => e.meta.operation === 'result')).toEqual([]);
    const gotten = audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get');
    expect(gotten.length).toBeGreaterThan(0);
    for (const event of gotten) {
      expect(event.meta).toEqual(
        expect.objectContaining({ clientEra: 'modern', backendEra: 'legacy' }),
      );
    }
  });

  it('shows a failed legacy task whose result is a tool error as completed with isError (status mapping)', async () => {
    const task = (await call('alice', 'deploy', { target: 'broken' })).message.result;
    backendIds.push((await fixture.started('broken')).taskId);
    await fixture.finish('broken', 'failed');
    const done = await waitFor(async () => {
      const { message } = await get('alice', task.taskId);
      return message.result?.status === 'working' ? undefined : message.result;
    }, 'the task to end');
    expect(done).toMatchObject({ status: 'completed', result: { isError: true } });
    expect(done).not.toHaveProperty('error');
  });

  it('shows a failed legacy task whose result is a JSON-RPC error as failed with that error (status mapping)', async () => {
    const task = (await call('alice', 'deploy', { target: 'protocol' })).message.result;
    backendIds.push((await fixture.started('protocol')).taskId);
    await fixture.failWithError('protocol', {
      code: -32603,
      message: 'the deploy broke the protocol',
    });
    const done = await waitFor(async () => {
      const { message } = await get('alice', task.taskId);
      return message.result?.status === 'working' ? undefined : message.result;
    }, 'the task to end');
    // The backend's JSON-RPC error as it sent it (the SDK prefixes its messages).
    expect(done).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'MCP error -32603: the deploy broke the protocol' },
    });
    expect(done).not.toHaveProperty('result');
  });

  it('runs an optional tool as a task that is already completed', async () => {
    const task = (await call('alice', 'nap')).message.result;
    expect(task).toMatchObject({ resultType: 'task' });
    expect(task.taskId).toMatch(BROKER_TASK_ID);
    const done = await waitFor(async () => {
      const { message } = await get('alice', task.taskId);
      return message.result?.status === 'completed' ? message.result : undefined;
    }, 'the nap to be completed');
    expect(done.result.content).toEqual([{ type: 'text', text: 'napped' }]);
  });

  it('runs an optional tool plain for a client that did not declare the extension', async () => {
    const plain = await call('alice', 'nap', {}, {});
    expect(plain.status).toBe(200);
    expect(plain.message.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'napped' }],
    });
  });

  it('refuses a required tool to a client that did not declare the extension (HTTP 400, -32021), sending nothing', async () => {
    const before = fixture.requests.filter(r => r.method === 'tools/call').length;
    const refused = await call('alice', 'deploy', { target: 'nope' }, {});
    expect(refused.status).toBe(400);
    expect(refused.message.error).toEqual({
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
    expect(fixture.requests.filter(r => r.method === 'tools/call').length).toBe(before);
  });

  it('cancels a working task with the legacy tasks/cancel, and acks a cancel of an ended one', async () => {
    const task = (await call('alice', 'deploy', { target: 'stop' })).message.result;
    const job = await fixture.started('stop');
    backendIds.push(job.taskId);
    const acked = await cancel('alice', task.taskId);
    expect(acked.status).toBe(200);
    expect(acked.message.result).toMatchObject({ resultType: 'complete' });
    expect(acked.message.result).not.toHaveProperty('taskId');
    expect(fixture.requests.some(r => r.method === 'tasks/cancel' && r.taskId === job.taskId)).toBe(
      true,
    );
    expect((await get('alice', task.taskId)).message.result.status).toBe('cancelled');
    // Already ended: the backend refuses, the broker acks as the extension says.
    const again = await cancel('alice', task.taskId);
    expect(again.message.result).toMatchObject({ resultType: 'complete' });
  });

  it('answers another person’s id exactly like an unknown one (E1)', async () => {
    const task = (await call('alice', 'nap')).message.result;
    const foreign = await get('bob', task.taskId);
    const unknown = await get('bob', `jobs:${'A'.repeat(43)}`);
    expect(foreign.message.error).toEqual(E1);
    expect(foreign.text.replace(/"id":\d+/, '')).toBe(unknown.text.replace(/"id":\d+/, ''));
    expect((await cancel('bob', task.taskId)).message.error).toEqual(E1);
  });

  it('answers E1 once tool.use is taken away, without asking the backend', async () => {
    const task = (await call('carol', 'nap')).message.result;
    revoked.add('user:default/carol');
    try {
      const refusal = await waitFor(async () => {
        const { message } = await get('carol', task.taskId);
        return message.error;
      }, 'the revocation to reach the decision cache');
      expect(refusal).toEqual(E1);
      const before = fixture.requests.length;
      expect((await get('carol', task.taskId)).message.error).toEqual(E1);
      expect((await cancel('carol', task.taskId)).message.error).toEqual(E1);
      expect(fixture.requests.length).toBe(before);
    } finally {
      revoked.delete('user:default/carol');
    }
  });

  it('never showed a client the backend’s own task ids (runs last)', () => {
    expect(backendIds.length).toBeGreaterThan(0);
    for (const text of received) {
      for (const id of backendIds) expect(text).not.toContain(id);
    }
  });
});

const { engines } = replicaDatabases('modern client × legacy backend tasks across replicas');

describe.each(engines)(
  'a 2026-07-28 client’s task on a 2025-11-25 backend across replicas (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);

    it('is created on A and collected on B', async () => {
      const fixture = await startTasksServer();
      const { factory } = recordingAuditor();
      const a = await startReplica(fixture, factory, knexes[0]);
      const b = await startReplica(fixture, factory, knexes[1]);
      try {
        await listed(a.url);
        await listed(b.url);
        const onA = clientOf(() => a.url);
        const onB = clientOf(() => b.url);
        const task = (await onA.call('alice', 'deploy', { target: 'shared' })).message.result;
        expect(task.taskId).toMatch(BROKER_TASK_ID);
        const job = await fixture.started('shared');
        expect((await onB.get('alice', task.taskId)).message.result.status).toBe('working');
        expect((await onB.get('bob', task.taskId)).message.error).toEqual(E1);
        await fixture.finish('shared', 'completed');
        const done = await waitFor(async () => {
          const { message } = await onB.get('alice', task.taskId);
          return message.result?.status === 'completed' ? message.result : undefined;
        }, 'the task to complete on B');
        expect(done.result.content).toEqual([{ type: 'text', text: 'deployed shared' }]);
        for (const text of received) expect(text).not.toContain(job.taskId);
      } finally {
        await a.stop();
        await b.stop();
        await fixture.close();
      }
    }, 60_000);
  },
);
