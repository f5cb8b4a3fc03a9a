/*
 * Long-running tasks, 2026-07-28 client × 2026-07-28 backend: the tasks extension
 * `io.modelcontextprotocol/tasks` through the broker (docs/contracts/tasks-and-apps.md §2.2,
 * §2.7, §2.8, §2.12.2, §2.13, §2.14), through the whole plugin (startTestBackend) with the real
 * modern tasks fixture (`deploy` finished by the test, `approve` asking one question, the
 * conformance tools) and a stateless client speaking raw HTTP, as a 2026-07-28 client does. Two
 * plugin instances on one database (SQLite and PostgreSQL) are two replicas: a task created on
 * one is collected on the other. Every answer a client receives is scanned for the backend's
 * own task ids (the fixture's all start with `fixture-`).
 */
import {
  MODERN_TASK_TTL_MS,
  startModernTasksServer,
  TASKS_EXTENSION,
  type ModernTasksServer,
} from '@internal/test-mcp-backends';
import type { Knex } from 'knex';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { taskRefOf } from './tasks/TaskAuditor';
import { modernRequest, type ModernRequestOptions } from './tasks/__testUtils__/modernRequest';
import { startTaskBroker } from './tasks/__testUtils__/startTaskBroker';
import { waitFor } from './testing/waitFor';

const E1 = {
  code: -32602,
  message: 'Failed to retrieve task: Task not found',
  data: { reason: 'task-not-found' },
};
const BROKER_TASK_ID = /^jobs:[A-Za-z0-9_-]{43}$/;
const PER_PERSON = 8;

/** Users whose `mcp-broker.tool.use` is taken away (the other four permissions stay). */
const revoked = new Set<string>();

/** Everything every broker answered, as text (scanned for the backend's ids). */
const received: string[] = [];

/** A broker replica with the fixture as `jobs`; on `knex` with `sessionStore: database`. */
function startReplica(
  fixture: ModernTasksServer,
  auditor: unknown,
  options: { knex?: Knex; maxTtlSeconds?: number; perPerson?: number; enabled?: boolean } = {},
) {
  const { knex, maxTtlSeconds, perPerson, enabled } = options;
  return startTaskBroker({
    fixtureUrl: fixture.url,
    auditor,
    revoked,
    knex,
    tasks: {
      ...(maxTtlSeconds === undefined ? {} : { maxTtl: { seconds: maxTtlSeconds } }),
      ...(perPerson === undefined ? {} : { perPerson }),
      ...(enabled === undefined ? {} : { enabled }),
    },
  });
}

/**
 * One 2026-07-28 request of `user` to `url`: the extension declared unless `capabilities` says
 * otherwise, `Mcp-Name` mirroring the tool name or task id unless `name` says otherwise (null:
 * absent). Its answer goes to `received` too.
 */
const modern = (
  url: URL,
  user: string,
  method: string,
  params: Record<string, unknown>,
  options: Omit<ModernRequestOptions, 'received'> = {},
) => modernRequest(url, user, method, params, { ...options, received });

/** The client's calls of one broker. */
function clientOf(url: () => URL) {
  const call = (user: string, tool: string, args: Record<string, unknown> = {}) =>
    modern(url(), user, 'tools/call', { name: `jobs_${tool}`, arguments: args });
  const get = (user: string, taskId: string) => modern(url(), user, 'tasks/get', { taskId });
  /** Polls `tasks/get` until the task's status is not `working` (or `until` holds). */
  const settled = (
    user: string,
    taskId: string,
    until: (result: any) => boolean = result => result?.status !== 'working',
  ) =>
    waitFor(async () => {
      const { message } = await get(user, taskId);
      return until(message.result) ? message.result : undefined;
    }, `task ${taskId} to move on`);
  return { call, get, settled };
}

describe('tasks through the broker (2026-07-28 client and backend, real modern tasks fixture)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  let fixture: ModernTasksServer;
  let broker: { url: URL; stop(): Promise<void> };
  const { call, get, settled } = clientOf(() => broker.url);

  beforeAll(async () => {
    fixture = await startModernTasksServer();
    broker = await startReplica(fixture, auditorFactory, { perPerson: PER_PERSON });
    await waitFor(async () => {
      const { message } = await modern(broker.url, 'alice', 'tools/list', {});
      return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
    }, 'the modern tasks fixture to be listed');
  }, 60_000);

  afterAll(async () => {
    await broker?.stop();
    await fixture?.close();
  }, 30_000);

  it('declares the tasks extension in server/discover', async () => {
    const { message } = await modern(broker.url, 'alice', 'server/discover', {});
    expect(message.result.capabilities.extensions).toEqual(
      expect.objectContaining({ [TASKS_EXTENSION]: {} }),
    );
    expect(message.result.capabilities.tasks).toBeUndefined();
  });

  it('creates a task under a broker id, polls it with tasks/get to completed; the backend sees only its own id', async () => {
    const created = await call('alice', 'deploy', { target: 'web' });
    expect(created.status).toBe(200);
    const task = created.message.result;
    expect(task).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: MODERN_TASK_TTL_MS,
    });
    expect(task.taskId).toMatch(BROKER_TASK_ID);
    const job = await fixture.started('web');
    expect(job.taskId).not.toBe(task.taskId);
    // The backend was told this one request may become a task.
    const sent = fixture.requests.find(
      r => r.method === 'tools/call' && r.credential === job.credential && r.meta,
    );
    expect((sent?.meta?.['io.modelcontextprotocol/clientCapabilities'] as any)?.extensions).toEqual(
      expect.objectContaining({ [TASKS_EXTENSION]: {} }),
    );

    const working = await get('alice', task.taskId);
    expect(working.message.result).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'working',
    });
    await fixture.finish('web', 'completed');
    const done = await get('alice', task.taskId);
    expect(done.message.result).toMatchObject({
      resultType: 'complete',
      taskId: task.taskId,
      status: 'completed',
      result: { content: [{ type: 'text', text: 'deployed web' }] },
    });
    // Mcp-Name towards the backend is the backend's id, as is params.taskId.
    const gets = fixture.requests.filter(r => r.method === 'tasks/get' && r.taskId === job.taskId);
    expect(gets.map(r => r.mcpName)).toEqual([job.taskId, job.taskId]);
    // One tool-call event naming the task by its ref, and one task event per get.
    const ref = taskRefOf(task.taskId);
    expect(audit.filter(e => e.end?.meta.taskRef === ref)).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ tool: 'deploy' }),
        end: expect.objectContaining({ meta: expect.objectContaining({ resultType: 'task' }) }),
      }),
    ]);
    expect(audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'get')).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ clientEra: 'modern', backendEra: 'modern' }),
        end: expect.objectContaining({ outcome: 'succeeded' }),
      }),
      expect.objectContaining({ end: expect.objectContaining({ outcome: 'succeeded' }) }),
    ]);
    // Its end, once: written by the get that first saw it completed.
    expect(audit.filter(e => e.meta.taskRef === ref && e.meta.operation === 'ended')).toEqual([
      expect.objectContaining({
        meta: expect.objectContaining({ status: 'completed', ageMs: expect.any(Number) }),
      }),
    ]);
    expect(JSON.stringify(audit)).not.toContain(task.taskId);
  });

  it('inlines a tool error as a completed task with isError, and a protocol error as a failed task', async () => {
    const failing = (await call('alice', 'failing_job')).message.result;
    expect(failing).toMatchObject({
      resultType: 'task',
      taskId: expect.stringMatching(BROKER_TASK_ID),
    });
    expect(await settled('alice', failing.taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'the job failed' }], isError: true },
    });
    const crashing = (await call('alice', 'protocol_error_job')).message.result;
    expect(await settled('alice', crashing.taskId)).toMatchObject({
      status: 'failed',
      error: { code: -32603, message: 'Internal error: the job crashed' },
    });
  });

  it('shows a task’s question in tasks/get and passes its answer with tasks/update, keys verbatim', async () => {
    const task = (await call('alice', 'approve', { target: 'prod' })).message.result;
    const waiting = await settled(
      'alice',
      task.taskId,
      result => result?.status === 'input_required',
    );
    const keys = Object.keys(waiting.inputRequests);
    expect(keys).toHaveLength(1);
    expect(waiting.inputRequests[keys[0]]).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'form', message: 'Approve prod?' },
    });
    // A key the backend refuses as "not found": its answer passes, the task stays.
    const refused = await modern(broker.url, 'alice', 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { 'refused-key': { action: 'accept', content: {} } },
    });
    expect(refused.message.error).toEqual({
      code: -32602,
      message: 'Input request "refused-key" not found',
    });
    expect((await get('alice', task.taskId)).message.result.status).toBe('input_required');
    const updated = await modern(broker.url, 'alice', 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { [keys[0]]: { action: 'accept', content: { approve: true } } },
    });
    expect(updated.status).toBe(200);
    expect(updated.message.result).toMatchObject({ resultType: 'complete' });
    expect(await settled('alice', task.taskId)).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'approved prod' }] },
    });
    // The backend got its own key and the backend id, in the body and in Mcp-Name.
    const update = fixture.requests.findLast(r => r.method === 'tasks/update');
    expect(update?.taskId).toMatch(/^fixture-/);
    expect(update?.mcpName).toBe(update?.taskId);
  });

  it('screens a task’s URL elicitations as every elicitation: named with their server, https only', async () => {
    const task = (await call('alice', 'sign_in', { url: 'https://idp.example.com/login' })).message
      .result;
    const waiting = await settled(
      'alice',
      task.taskId,
      result => result?.status === 'input_required',
    );
    expect(Object.values(waiting.inputRequests)).toEqual([
      {
        method: 'elicitation/create',
        params: expect.objectContaining({
          mode: 'url',
          url: 'https://idp.example.com/login',
          message: 'MCP server "jobs" asks you to open a link: Sign in to continue',
        }),
      },
    ]);
    const unsafe = (await call('alice', 'sign_in', { url: 'http://idp.example.com/login' })).message
      .result;
    const refused = await waitFor(async () => {
      const { message } = await get('alice', unsafe.taskId);
      return message.error;
    }, 'the task to ask for its link');
    expect(refused).toMatchObject({
      code: -32603,
      message: expect.stringContaining(
        'MCP server "jobs" asked for input the broker does not relay. The MCP broker does not relay this URL elicitation to the person',
      ),
    });
    expect(JSON.stringify(refused)).not.toContain('http://idp.example.com');
  });

  it('cancels a task with tasks/cancel', async () => {
    const task = (await call('alice', 'deploy', { target: 'cancelled' })).message.result;
    await fixture.started('cancelled');
    const cancelled = await modern(broker.url, 'alice', 'tasks/cancel', { taskId: task.taskId });
    expect(cancelled.status).toBe(200);
    expect(cancelled.message.result).toMatchObject({ resultType: 'complete' });
    expect((await get('alice', task.taskId)).message.result.status).toBe('cancelled');
    expect(
      audit.some(e => e.meta.operation === 'cancel' && e.meta.taskRef === taskRefOf(task.taskId)),
    ).toBe(true);
  });

  it('refuses task operations of a client that did not declare the extension (E4), before anything else', async () => {
    const task = (await call('alice', 'deploy', { target: 'e4' })).message.result;
    const before = fixture.requests.length;
    for (const method of ['tasks/get', 'tasks/cancel']) {
      const refused = await modern(
        broker.url,
        'alice',
        method,
        { taskId: task.taskId },
        {
          capabilities: {},
        },
      );
      expect(refused.status).toBe(400);
      expect(refused.message.error).toEqual({
        code: -32021,
        message: 'Missing required client capability',
        data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
      });
    }
    // Before its params are looked at: a malformed tasks/update gets E4 too.
    const malformed = await modern(
      broker.url,
      'alice',
      'tasks/update',
      { taskId: task.taskId, inputResponses: 'yes' },
      { capabilities: {} },
    );
    expect(malformed.status).toBe(400);
    expect(malformed.message.error.code).toBe(-32021);
    expect(fixture.requests.slice(before)).toEqual([]);
    // Modern clients have no tasks/result and no tasks/list (E5).
    for (const method of ['tasks/result', 'tasks/list']) {
      const missing = await modern(
        broker.url,
        'alice',
        method,
        { taskId: task.taskId },
        {
          name: null,
        },
      );
      expect(missing.status).toBe(404);
      expect(missing.message.error.code).toBe(-32601);
    }
  });

  it('checks Mcp-Name against params.taskId (E6)', async () => {
    const task = (await call('alice', 'deploy', { target: 'e6' })).message.result;
    const absent = await modern(
      broker.url,
      'alice',
      'tasks/get',
      { taskId: task.taskId },
      {
        name: null,
      },
    );
    expect(absent.status).toBe(400);
    expect(absent.message.error).toMatchObject({
      code: -32020,
      message: expect.stringContaining(
        'the Mcp-Name header is required for tasks/get; send params.taskId',
      ),
    });
    const other = await modern(
      broker.url,
      'alice',
      'tasks/get',
      { taskId: task.taskId },
      {
        name: 'jobs:other',
      },
    );
    expect(other.status).toBe(400);
    expect(other.message.error).toMatchObject({
      code: -32020,
      message: `Header mismatch: Mcp-Name header "jobs:other" differs from params.taskId "${task.taskId}"`,
    });
  });

  it('answers another person’s id exactly like an unknown one (E1), and never asks the backend', async () => {
    const task = (await call('alice', 'deploy', { target: 'private' })).message.result;
    const before = fixture.requests.length;
    const strip = (text: string) => text.replace(/"id":\d+/, '"id":0');
    const foreign = await get('bob', task.taskId);
    const unknown = await get('bob', `jobs:${'A'.repeat(43)}`);
    expect(foreign.status).toBe(200);
    expect(strip(foreign.text)).toEqual(strip(unknown.text));
    expect(foreign.message.error).toEqual(E1);
    const update = await modern(broker.url, 'bob', 'tasks/update', {
      taskId: task.taskId,
      inputResponses: {},
    });
    expect(update.message.error).toEqual(E1);
    const cancel = await modern(broker.url, 'bob', 'tasks/cancel', { taskId: task.taskId });
    expect(cancel.message.error).toEqual(E1);
    expect(fixture.requests.slice(before)).toEqual([]);
    expect(
      audit.filter(
        e =>
          e.meta.taskRef === undefined &&
          e.meta.operation === 'get' &&
          e.end?.outcome === 'foreign',
      ),
    ).toHaveLength(1);
    // The owner still has it.
    expect((await get('alice', task.taskId)).message.result.status).toBe('working');
  });

  it('answers E1 once tool.use is taken away; the task is not cancelled and is back once restored', async () => {
    const task = (await call('erin', 'deploy', { target: 'revocable' })).message.result;
    revoked.add('user:default/erin');
    try {
      const refusal = await waitFor(async () => {
        const { message } = await get('erin', task.taskId);
        return message.error;
      }, 'the revocation to reach the decision cache');
      expect(refusal).toEqual(E1);
      expect(audit.some(e => e.meta.operation === 'get' && e.end?.outcome === 'denied')).toBe(true);
    } finally {
      revoked.delete('user:default/erin');
    }
    const back = await waitFor(async () => {
      const { message } = await get('erin', task.taskId);
      return message.result;
    }, 'the restored decision to reach the decision cache');
    expect(back.status).toBe('working');
  });

  it('refuses tasks/update answers that are not objects, naming params.inputResponses', async () => {
    const task = (await call('alice', 'deploy', { target: 'bad-update' })).message.result;
    const refused = await modern(broker.url, 'alice', 'tasks/update', {
      taskId: task.taskId,
      inputResponses: { approval: 'yes' },
    });
    expect(refused.message.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('params.inputResponses'),
    });
  });

  it('at mcpBroker.tasks.perPerson runs calls without the extension, and refuses one that needs a task with HTTP 429 (E7)', async () => {
    const made: string[] = [];
    for (let i = 0; i < PER_PERSON; i += 1) {
      made.push((await call('carol', 'deploy', { target: `carol-${i}` })).message.result.taskId);
    }
    const before = fixture.requests.length;
    const refused = await call('carol', 'deploy', { target: 'carol-over' });
    expect(refused.status).toBe(429);
    expect(refused.message.error).toEqual({
      code: -32000,
      message: `Open task limit reached: ${PER_PERSON} open tasks per person (mcpBroker.tasks.perPerson); wait for one to finish or cancel one with tasks/cancel`,
      data: { reason: 'task-limit', limit: PER_PERSON },
    });
    // The backend was asked without the extension (it refused: the tool needs a task).
    const [asked] = fixture.requests.slice(before);
    expect(asked.method).toBe('tools/call');
    expect(asked.meta?.['io.modelcontextprotocol/clientCapabilities']).toEqual({});
    // A call that can run at once still does.
    expect((await call('carol', 'nap')).message.result.content).toEqual([
      { type: 'text', text: 'napped' },
    ]);
    expect(audit.some(e => e.meta.operation === 'create' && e.end?.outcome === 'limited')).toBe(
      true,
    );
    // A cancelled task frees its slot.
    await modern(broker.url, 'carol', 'tasks/cancel', { taskId: made[0] });
    expect((await call('carol', 'deploy', { target: 'carol-after' })).message.result).toMatchObject(
      { resultType: 'task', status: 'working' },
    );
  });

  it('runs a call at once when the backend answers at once (no task)', async () => {
    const napped = await call('alice', 'nap');
    expect(napped.message.result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'napped' }],
    });
  });

  it('answers E3 for a task the backend no longer knows, and forgets the task (forgets every task: last but one)', async () => {
    const task = (await call('grace', 'deploy', { target: 'lost' })).message.result;
    await fixture.started('lost');
    fixture.forgetTasks();
    expect((await get('grace', task.taskId)).message.error).toEqual({
      code: -32602,
      message: 'Failed to retrieve task: Task not found (MCP server "jobs" no longer has it)',
      data: { reason: 'task-lost', server: 'jobs' },
    });
    // The row went with it: the id is unknown now, and the backend is not asked again.
    const before = fixture.requests.length;
    expect((await get('grace', task.taskId)).message.error).toEqual(E1);
    expect(fixture.requests.slice(before)).toEqual([]);
  });

  it('never showed a client the backend’s own task ids (runs last: every answer of this block)', () => {
    expect(received.length).toBeGreaterThan(20);
    for (const text of received) expect(text).not.toContain('fixture-');
  });
});

describe('an expired task (mcpBroker.tasks.maxTtl: 1 s)', () => {
  it('tells its owner that it expired (E2), and anybody else that it is not found', async () => {
    const fixture = await startModernTasksServer();
    const { factory } = recordingAuditor();
    const broker = await startReplica(fixture, factory, { maxTtlSeconds: 1 });
    const { call, get } = clientOf(() => broker.url);
    try {
      await waitFor(async () => {
        const { message } = await modern(broker.url, 'frank', 'tools/list', {});
        return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
      }, 'the modern tasks fixture to be listed');
      const task = (await call('frank', 'deploy', { target: 'brief' })).message.result;
      expect(task.ttlMs).toBe(1000);
      const expired = await waitFor(
        async () => (await get('frank', task.taskId)).message.error,
        'the task to expire at the broker',
      );
      expect(expired).toEqual({
        code: -32602,
        message: 'Failed to retrieve task: Task has expired',
        data: { reason: 'task-expired' },
      });
      expect((await get('bob', task.taskId)).message.error).toEqual(E1);
    } finally {
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

describe('tasks switched off (mcpBroker.tasks.enabled: false), 2026-07-28', () => {
  it('declares no extension, never tells the backend a client takes tasks, and finds no tasks/* method', async () => {
    const fixture = await startModernTasksServer();
    const { factory } = recordingAuditor();
    const broker = await startReplica(fixture, factory, { enabled: false });
    const { call, get } = clientOf(() => broker.url);
    try {
      await waitFor(async () => {
        const { message } = await modern(broker.url, 'alice', 'tools/list', {});
        return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
      }, 'the modern tasks fixture to be listed');
      const discovered = await modern(broker.url, 'alice', 'server/discover', {});
      expect(discovered.message.result.capabilities.extensions?.[TASKS_EXTENSION]).toBeUndefined();
      // The backend was not told: a tool that needs a task is refused by the backend itself.
      const refused = await call('alice', 'deploy', { target: 'off' });
      expect(refused.status).toBe(400);
      expect(refused.message.error.code).toBe(-32021);
      expect((await call('alice', 'nap')).message.result.content).toEqual([
        { type: 'text', text: 'napped' },
      ]);
      const missing = await get('alice', `jobs:${'A'.repeat(43)}`);
      expect(missing.status).toBe(404);
      expect(missing.message.error.code).toBe(-32601);
    } finally {
      await broker.stop();
      await fixture.close();
    }
  }, 60_000);
});

const { engines } = replicaDatabases('modern tasks across replicas');

describe.each(engines)(
  'a 2026-07-28 task across replicas (two plugin instances on one $label database)',
  engine => {
    const knexes = replicaDatabaseForSuite(engine);

    it('is created on A and collected on B', async () => {
      const fixture = await startModernTasksServer();
      const { factory } = recordingAuditor();
      const a = await startReplica(fixture, factory, { knex: knexes[0] });
      const b = await startReplica(fixture, factory, { knex: knexes[1] });
      try {
        for (const replica of [a, b]) {
          await waitFor(async () => {
            const { message } = await modern(replica.url, 'alice', 'tools/list', {});
            return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
          }, 'the modern tasks fixture to be listed');
        }
        const onA = clientOf(() => a.url);
        const onB = clientOf(() => b.url);
        const task = (await onA.call('alice', 'deploy', { target: 'shared' })).message.result;
        expect(task.taskId).toMatch(BROKER_TASK_ID);
        await fixture.started('shared');
        expect((await onB.get('alice', task.taskId)).message.result.status).toBe('working');
        // Another person on B: unknown.
        expect((await onB.get('bob', task.taskId)).message.error).toEqual(E1);
        await fixture.finish('shared', 'completed');
        expect((await onB.get('alice', task.taskId)).message.result).toMatchObject({
          status: 'completed',
          result: { content: [{ type: 'text', text: 'deployed shared' }] },
        });
        for (const text of received) expect(text).not.toContain('fixture-');
      } finally {
        await a.stop();
        await b.stop();
        await fixture.close();
      }
    }, 60_000);

    it('answers a call that would create a task with 503 and Retry-After while the task table is out of reach, sending nothing', async () => {
      const fixture = await startModernTasksServer();
      const { factory } = recordingAuditor();
      const replica = await startReplica(fixture, factory, { knex: knexes[0] });
      const knex = knexes[0];
      try {
        await waitFor(async () => {
          const { message } = await modern(replica.url, 'alice', 'tools/list', {});
          return message?.result?.tools?.some((tool: any) => tool.name === 'jobs_deploy');
        }, 'the modern tasks fixture to be listed');
        const sent = fixture.requests.length;
        // The table is gone for a moment: every query of it fails, as with a database outage.
        await knex.schema.renameTable('mcp_broker_tasks', 'mcp_broker_tasks_away');
        let answer: Awaited<ReturnType<typeof modern>>;
        try {
          answer = await modern(replica.url, 'alice', 'tools/call', {
            name: 'jobs_deploy',
            arguments: { target: 'outage' },
          });
        } finally {
          await knex.schema.renameTable('mcp_broker_tasks_away', 'mcp_broker_tasks');
        }
        expect(answer.status).toBe(503);
        expect(answer.retryAfter).toMatch(/^[1-9][0-9]*$/);
        expect(answer.message.error).toEqual({
          code: -32603,
          message: 'The MCP broker cannot reach its session store right now; retry shortly',
          data: { reason: 'store-unavailable' },
        });
        expect(fixture.requests.slice(sent).map(request => request.method)).toEqual([]);
        // Back: the same call creates its task.
        const task = (await clientOf(() => replica.url).call('alice', 'deploy', { target: 'back' }))
          .message.result;
        expect(task.taskId).toMatch(BROKER_TASK_ID);
      } finally {
        await replica.stop();
        await fixture.close();
      }
    }, 60_000);
  },
);
