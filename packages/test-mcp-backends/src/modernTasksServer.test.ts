/*
 * The tasks fixture's 2026-07-28 half on the wire (raw fetch, so every field is seen as sent):
 * what the broker's task tests rely on — deploy finished by the test, approve's input round,
 * nap's immediate answer, tasks bound to their credential, listen notifications — and every task
 * message checked against the official `@modelcontextprotocol/ext-tasks` schemas.
 */
import {
  startModernTasksServer,
  TASKS_EXTENSION,
  type ModernTasksServer,
} from './modernTasksServer';
import { sseMessages } from './sseMessages';
import { validateTaskMessages } from './validateTaskMessages';

const DECLARING = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS_EXTENSION]: {} } },
};
const PLAIN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

// validateTaskMessages starts a Node process that loads zod 4 (1–3 s on an idle machine, more
// under load): the steps that use it need more than Jest's default 5 s.
jest.setTimeout(60_000);

describe('tasks fixture (2026-07-28 half, raw HTTP)', () => {
  let server: ModernTasksServer;
  let nextId = 1;

  beforeEach(async () => {
    server = await startModernTasksServer();
  });

  afterEach(async () => {
    await server.close();
  });

  /** One request with the headers SEP-2243 asks for; the HTTP status and the JSON-RPC body. */
  async function rpc(
    method: string,
    params: Record<string, unknown>,
    options: { credential?: string; declare?: boolean; name?: string } = {},
  ): Promise<{ status: number; body: any }> {
    const name =
      options.name ??
      (method === 'tools/call' ? String(params.name) : (params.taskId as string | undefined));
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': method,
        ...(name !== undefined && { 'mcp-name': name }),
        authorization: options.credential ?? 'Bearer alice',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: nextId++,
        method,
        params: { ...params, _meta: options.declare === false ? PLAIN : DECLARING },
      }),
    });
    return { status: response.status, body: await response.json() };
  }

  const call = (tool: string, args: Record<string, unknown> = {}, options = {}) =>
    rpc('tools/call', { name: tool, arguments: args }, options);

  it('declares the extension in server/discover and no v1 tasks capability', async () => {
    const { body } = await rpc('server/discover', {});
    expect(body.result.capabilities).toEqual({
      tools: {},
      extensions: { [TASKS_EXTENSION]: {} },
    });
  });

  it('answers deploy with a flat task the test finishes, inlined in tasks/get', async () => {
    const created = (await call('deploy', { target: 'web' })).body.result;
    expect(created).toMatchObject({ resultType: 'task', status: 'working', ttlMs: 60_000 });
    expect(created).not.toHaveProperty('task');
    const job = await server.started('web');
    expect(job).toMatchObject({ taskId: created.taskId, credential: 'Bearer alice' });

    const working = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    expect(working).toMatchObject({ status: 'working', resultType: 'complete' });
    expect(working).not.toHaveProperty('result');

    await server.finish('web', 'completed');
    const done = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'deployed web' }] },
    });
    expect(await validateTaskMessages(server.taskMessages)).toEqual([]);
  });

  it('refuses a required-task tool to a client that did not declare the extension (-32021, 400)', async () => {
    const { status, body } = await call('deploy', { target: 'web' }, { declare: false });
    expect(status).toBe(400);
    expect(body.error).toEqual({
      code: -32021,
      message: 'Missing required client capability',
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    });
  });

  it('answers nap at once even to a declaring client', async () => {
    const { body } = await call('nap');
    expect(body.result).toEqual({
      resultType: 'complete',
      content: [{ type: 'text', text: 'napped' }],
    });
  });

  it('parks approve on one question under a key of its own, and finishes on tasks/update', async () => {
    const created = (await call('approve', { target: 'prod' })).body.result;
    const parked = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    expect(parked.status).toBe('input_required');
    const keys = Object.keys(parked.inputRequests);
    expect(keys).toEqual([expect.stringMatching(/^approval-\d+$/)]);
    expect(parked.inputRequests[keys[0]]).toMatchObject({
      method: 'elicitation/create',
      params: { message: 'Approve prod?' },
    });

    const ack = await rpc('tasks/update', {
      taskId: created.taskId,
      inputResponses: {
        'someone-else-1': { action: 'accept', content: { approve: false } },
        [keys[0]]: { action: 'accept', content: { approve: true } },
      },
    });
    expect(ack.body.result).toEqual({ resultType: 'complete' });
    const done = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    expect(done).toMatchObject({
      status: 'completed',
      result: { content: [{ type: 'text', text: 'approved prod' }] },
    });
    expect(await validateTaskMessages(server.taskMessages)).toEqual([]);
  });

  it('parks sign_in on a URL elicitation, and finishes once it is accepted', async () => {
    const created = (await call('sign_in', { url: 'https://idp.example.com/login' })).body.result;
    const parked = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    const keys = Object.keys(parked.inputRequests);
    expect(keys).toEqual([expect.stringMatching(/^link-\d+$/)]);
    expect(parked.inputRequests[keys[0]]).toMatchObject({
      method: 'elicitation/create',
      params: { mode: 'url', url: 'https://idp.example.com/login', message: 'Sign in to continue' },
    });
    await rpc('tasks/update', {
      taskId: created.taskId,
      inputResponses: { [keys[0]]: { action: 'accept' } },
    });
    const done = (await rpc('tasks/get', { taskId: created.taskId })).body.result;
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'signed in' }] });
    expect(await validateTaskMessages(server.taskMessages)).toEqual([]);
  });

  it('meets a task with another credential as an unknown task', async () => {
    const created = (await call('deploy', { target: 'web' })).body.result;
    const foreign = await rpc(
      'tasks/get',
      { taskId: created.taskId },
      { credential: 'Bearer bob' },
    );
    const unknown = await rpc('tasks/get', { taskId: 'fixture-nope' });
    expect(foreign.body.error).toEqual({
      code: -32602,
      message: 'Failed to retrieve task: Task not found',
    });
    expect(unknown.body.error).toEqual(foreign.body.error);
  });

  it('has no tasks/result or tasks/list in this revision (-32601)', async () => {
    const created = (await call('deploy', { target: 'web' })).body.result;
    for (const method of ['tasks/result', 'tasks/list']) {
      const { body } = await rpc(method, { taskId: created.taskId });
      expect(body.error.code).toBe(-32601);
    }
  });

  it('checks Mcp-Name against params.taskId (-32020, 400)', async () => {
    const created = (await call('deploy', { target: 'web' })).body.result;
    const { status, body } = await rpc('tasks/get', { taskId: created.taskId }, { name: 'other' });
    expect(status).toBe(400);
    expect(body.error.code).toBe(-32020);
  });

  it('sends notifications/tasks on a listen stream for the ids it agreed to, and only those', async () => {
    const mine = (await call('deploy', { target: 'web' })).body.result;
    const response = await fetch(server.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'mcp-method': 'subscriptions/listen',
        authorization: 'Bearer alice',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'listen-1',
        method: 'subscriptions/listen',
        params: { notifications: { taskIds: [mine.taskId, 'fixture-nope'] }, _meta: DECLARING },
      }),
    });
    const reader = response.body!.getReader();
    const events = sseMessages(reader);
    const acknowledged = (await events.next()).value;
    expect(acknowledged).toMatchObject({
      method: 'notifications/subscriptions/acknowledged',
      params: { notifications: { taskIds: [mine.taskId] } },
    });
    await server.finish('web', 'completed');
    const notified = (await events.next()).value;
    expect(notified).toMatchObject({
      method: 'notifications/tasks',
      params: {
        taskId: mine.taskId,
        status: 'completed',
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
      },
    });
    await reader.cancel();
    expect(await validateTaskMessages(server.taskMessages)).toEqual([]);
  });

  it('validation rejects a message that does not fit its ext-tasks schema', async () => {
    // The check above must be able to fail: a CreateTaskResult with the v1 wrapper.
    const problems = await validateTaskMessages([
      {
        schema: 'CreateTaskResultV2Schema',
        message: { resultType: 'task', task: { taskId: 'x', status: 'working' } },
      },
    ]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^#0 CreateTaskResultV2Schema: /);
  });
});
