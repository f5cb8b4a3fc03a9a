/*
 * The tasks fixture's 2025-11-25 half, driven by the official SDK 1.x client's task API: what
 * the broker's task tests rely on (a task per deploy, finished by the test — or, as the
 * development `jobs` server, on its own after `deployDurationMs`; bound to its session and its
 * credential; nap answering with or without a task).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  type ElicitRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { startTasksServer, TASK_POLL_INTERVAL_MS, type LegacyTasksServer } from './tasksServer';
import { validateTaskMessages } from './validateTaskMessages';

// validateTaskMessages starts a Node process that loads zod 4 (1–3 s on an idle machine, more
// under load): the steps that use it need more than Jest's default 5 s.
jest.setTimeout(60_000);

describe('tasks fixture (2025-11-25 half, SDK 1.x client)', () => {
  let server: LegacyTasksServer;
  const clients: Client[] = [];

  beforeEach(async () => {
    server = await startTasksServer();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map(client => client.close()));
    await server.close();
  });

  async function connect(
    credential: string,
    capabilities: Record<string, unknown> = {},
  ): Promise<Client> {
    const client = new Client({ name: 'tasks-fixture-test', version: '1.0.0' }, { capabilities });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: credential } },
      }),
    );
    clients.push(client);
    return client;
  }

  const startDeploy = (client: Client, target: string, ttl?: number) =>
    client.request(
      {
        method: 'tools/call',
        params: { name: 'deploy', arguments: { target }, task: ttl === undefined ? {} : { ttl } },
      },
      CreateTaskResultSchema,
    );

  it('declares the tasks capability and the tools’ task support', async () => {
    const client = await connect('Bearer alice');
    expect(client.getServerCapabilities()?.tasks).toEqual({
      list: {},
      cancel: {},
      requests: { tools: { call: {} } },
    });
    const { tools } = await client.listTools();
    expect(tools.map(tool => [tool.name, tool.execution?.taskSupport])).toEqual([
      ['deploy', 'required'],
      ['nap', 'optional'],
      ['approve', 'required'],
      ['confirm_deploy', 'required'],
    ]);
  });

  it('answers a deploy with a working task that the test completes, and its result', async () => {
    const client = await connect('Bearer alice');
    const created = await startDeploy(client, 'web', 30_000);
    const { task } = created;
    expect(task).toMatchObject({ status: 'working', ttl: 30_000 });
    expect(task.pollInterval).toBe(TASK_POLL_INTERVAL_MS);
    const job = await server.started('web');
    expect(job).toMatchObject({ target: 'web', taskId: task.taskId, credential: 'Bearer alice' });

    const working = await client.experimental.tasks.getTask(task.taskId);
    expect(working.status).toBe('working');
    await server.finish('web', 'completed');
    const completed = await client.experimental.tasks.getTask(task.taskId);
    expect(completed.status).toBe('completed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deployed web' }]);
    const listed = await client.experimental.tasks.listTasks();
    expect(listed.tasks.map(t => t.taskId)).toEqual([task.taskId]);

    // The messages as the SDK client received them fit the official 2025-11-25 task schemas.
    expect(
      await validateTaskMessages([
        { schema: 'CreateTaskResultV1Schema', message: created },
        { schema: 'GetTaskResultV1Schema', message: working },
        { schema: 'GetTaskResultV1Schema', message: completed },
        { schema: 'ListTasksResultV1Schema', message: listed },
      ]),
    ).toEqual([]);
  });

  it('fails a deploy as the test says, with an isError result', async () => {
    const client = await connect('Bearer alice');
    const { task } = await startDeploy(client, 'db');
    await server.finish('db', 'failed');
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true });
  });

  it('cancels a working task and refuses to cancel it again', async () => {
    const client = await connect('Bearer alice');
    const { task } = await startDeploy(client, 'api');
    expect((await client.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    await expect(client.experimental.tasks.cancelTask(task.taskId)).rejects.toThrow(
      /terminal status/,
    );
  });

  it('binds a task to its session and to its credential', async () => {
    const alice = await connect('Bearer alice');
    const { task } = await startDeploy(alice, 'web');
    const aliceElsewhere = await connect('Bearer alice');
    const mallory = await connect('Bearer mallory');
    for (const other of [aliceElsewhere, mallory]) {
      const refusal = await other.experimental.tasks.getTask(task.taskId).catch(e => e);
      expect(refusal).toBeInstanceOf(McpError);
      expect((refusal as McpError).message).toMatch(/Task not found/);
    }
    expect(server.requests.filter(r => r.method === 'tasks/get').map(r => r.credential)).toEqual([
      'Bearer alice',
      'Bearer mallory',
    ]);
  });

  it('retires a tool from the list of every session, open and new, and keeps its tasks', async () => {
    const client = await connect('Bearer alice');
    const { task } = await startDeploy(client, 'web');
    server.retireTool('deploy');
    const rest = ['nap', 'approve', 'confirm_deploy'];
    expect((await client.listTools()).tools.map(tool => tool.name)).toEqual(rest);
    const later = await connect('Bearer alice');
    expect((await later.listTools()).tools.map(tool => tool.name)).toEqual(rest);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('working');
    await server.finish('web', 'completed');
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });

  it('forgets its sessions with their tasks, or (keepTasks) keeps the tasks for the same credential', async () => {
    const alice = await connect('Bearer alice');
    const { task: lost } = await startDeploy(alice, 'lost');
    await server.forgetSessions();
    expect(await alice.listTools().catch(e => e)).toBeInstanceOf(Error);
    const again = await connect('Bearer alice');
    expect((await again.experimental.tasks.getTask(lost.taskId).catch(e => e)).message).toMatch(
      /Task not found/,
    );
    const { task: kept } = await startDeploy(again, 'kept');
    await server.forgetSessions({ keepTasks: true });
    const restarted = await connect('Bearer alice');
    expect((await restarted.experimental.tasks.getTask(kept.taskId)).status).toBe('working');
    const mallory = await connect('Bearer mallory');
    expect((await mallory.experimental.tasks.getTask(kept.taskId).catch(e => e)).message).toMatch(
      /Task not found/,
    );
    await server.finish('kept', 'completed');
    expect((await restarted.experimental.tasks.getTask(kept.taskId)).status).toBe('completed');
    // A restart without its tasks loses those that survived the one before too.
    await server.forgetSessions();
    const fresh = await connect('Bearer alice');
    expect((await fresh.experimental.tasks.getTask(kept.taskId).catch(e => e)).message).toMatch(
      /Task not found/,
    );
  });

  it('answers nap at once, with a task when asked for one and without', async () => {
    const client = await connect('Bearer alice');
    const plain = await client.callTool({ name: 'nap' });
    expect(plain.content).toEqual([{ type: 'text', text: 'napped' }]);
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'nap', task: {} } },
      CreateTaskResultSchema,
    );
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });

  it("asks approve's question on the tasks/result stream, related to the task, and completes with the answer", async () => {
    const client = await connect('Bearer alice', { elicitation: { form: {} } });
    const asked: ElicitRequest[] = [];
    client.setRequestHandler(ElicitRequestSchema, async request => {
      asked.push(request);
      return { action: 'accept', content: { approved: true } };
    });
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'approve', arguments: { target: 'web' }, task: {} } },
      CreateTaskResultSchema,
    );
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('input_required');

    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'approved web' }]);
    expect(asked).toHaveLength(1);
    expect(asked[0].params).toMatchObject({
      mode: 'form',
      message: 'Approve deploying web?',
      _meta: { 'io.modelcontextprotocol/related-task': { taskId: task.taskId } },
    });
    expect(server.answers).toEqual([
      expect.objectContaining({ result: { action: 'accept', content: { approved: true } } }),
    ]);
  });

  it('fails approve when its client declared no form elicitation', async () => {
    const client = await connect('Bearer alice');
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'approve', arguments: { target: 'db' }, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
  });

  it("asks confirm_deploy's question on the call's stream before its task, then answers with a completed task", async () => {
    const client = await connect('Bearer alice', { elicitation: { form: {} } });
    const asked: ElicitRequest[] = [];
    client.setRequestHandler(ElicitRequestSchema, async request => {
      asked.push(request);
      return { action: 'accept', content: { confirmed: true } };
    });
    const { task } = await client.request(
      {
        method: 'tools/call',
        params: { name: 'confirm_deploy', arguments: { target: 'web' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    expect(asked).toHaveLength(1);
    expect(asked[0].params).toMatchObject({ mode: 'form', message: 'Deploy web?' });
    expect(asked[0].params._meta?.['io.modelcontextprotocol/related-task']).toBeUndefined();
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'confirmed web' }]);
  });

  it('fails a deploy with a JSON-RPC error as its tasks/result when the test says so', async () => {
    const client = await connect('Bearer alice');
    const { task } = await startDeploy(client, 'proto');
    await server.started('proto');
    await server.failWithError('proto', { code: -32603, message: 'the deploy broke the protocol' });
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('failed');
    const refusal = await client.experimental.tasks
      .getTaskResult(task.taskId, CallToolResultSchema)
      .catch(e => e);
    expect(refusal).toBeInstanceOf(McpError);
    expect(refusal).toMatchObject({
      code: -32603,
      message: expect.stringMatching(/broke the protocol/),
    });
  });
});

describe('tasks fixture as the development jobs server (deployDurationMs)', () => {
  let server: LegacyTasksServer;
  let client: Client;

  beforeAll(async () => {
    server = await startTasksServer({ deployDurationMs: 2_000 });
    client = new Client({ name: 'tasks-fixture-test', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  it('says how long a deploy takes, and completes one on its own, no test finishing it', async () => {
    const { tools } = await client.listTools();
    expect(tools.find(tool => tool.name === 'deploy')?.description).toBe(
      'Deploys a target; takes 2 s',
    );
    const { task } = await client.request(
      { method: 'tools/call', params: { name: 'deploy', arguments: { target: 'web' }, task: {} } },
      CreateTaskResultSchema,
    );
    expect(task.status).toBe('working');
    // tasks/result waits until the task ends: here when the duration has passed.
    const result = await client.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deployed web' }]);
    expect((await client.experimental.tasks.getTask(task.taskId)).status).toBe('completed');
  });
});
