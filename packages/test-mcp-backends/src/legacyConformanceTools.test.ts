/*
 * The conformance task tools of the tasks fixture's 2025-11-25 half (legacyConformanceTools.ts),
 * driven by the official SDK 1.x client's task API: what the conformance scenarios need of them
 * once the broker translates them (docs/contracts/tasks-and-apps.md §7 configuration 2).
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
import { PROTOCOL_ERROR_JOB_ERROR } from './legacyConformanceTools';
import { startTasksServer, type LegacyTasksServer } from './tasksServer';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';

describe('the conformance task tools of the tasks fixture (2025-11-25 half, SDK 1.x client)', () => {
  let server: LegacyTasksServer;
  let client: Client;
  const asked: ElicitRequest[] = [];

  beforeAll(async () => {
    server = await startTasksServer({ conformanceTools: true });
    client = new Client(
      { name: 'conformance-tools-test', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    // Every question is answered: `confirm` accepted, `name` with the next of two names.
    const names = ['Ada', 'Lovelace'];
    client.setRequestHandler(ElicitRequestSchema, async request => {
      asked.push(request);
      const { params } = request;
      const asksConfirm =
        'requestedSchema' in params && 'confirm' in params.requestedSchema.properties;
      return asksConfirm
        ? { action: 'accept', content: { confirm: true } }
        : { action: 'accept', content: { name: names[(asked.length - 1) % 2] } };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), {
        requestInit: { headers: { Authorization: 'Bearer alice' } },
      }),
    );
  });

  afterAll(async () => {
    await client?.close();
    await server?.close();
  });

  beforeEach(() => {
    asked.length = 0;
  });

  /** Starts `name` as a task and resolves with its task id. */
  async function startTask(name: string, args: Record<string, unknown> = {}) {
    const { task } = await client.request(
      { method: 'tools/call', params: { name, arguments: args, task: {} } },
      CreateTaskResultSchema,
    );
    return task.taskId;
  }

  it('lists the conformance tools with their task support, beside the broker tests’ own', async () => {
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map(tool => [tool.name, tool.execution?.taskSupport]));
    expect(support).toEqual({
      deploy: 'required',
      nap: 'optional',
      approve: 'required',
      confirm_deploy: 'required',
      greet: 'forbidden',
      slow_compute: 'optional',
      failing_job: 'required',
      protocol_error_job: 'optional',
      confirm_delete: 'optional',
      multi_input: 'optional',
      test_tool_with_task: 'required',
    });
  });

  it('greets at once, without a task', async () => {
    const result = await client.callTool({ name: 'greet', arguments: { name: 'sep' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, sep!' }]);
  });

  it('computes slow_compute as a task that completes with its label', async () => {
    const taskId = await startTask('slow_compute', { seconds: 0, label: 'quick' });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'computed quick' }]);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it('fails failing_job with a tool error, and protocol_error_job with a JSON-RPC error', async () => {
    const failing = await startTask('failing_job');
    const result = await client.experimental.tasks.getTaskResult(failing, CallToolResultSchema);
    expect(result).toMatchObject({ isError: true });
    expect((await client.experimental.tasks.getTask(failing)).status).toBe('failed');

    const erring = await startTask('protocol_error_job');
    const refusal = await client.experimental.tasks
      .getTaskResult(erring, CallToolResultSchema)
      .catch(error => error);
    expect(refusal).toBeInstanceOf(McpError);
    expect(refusal).toMatchObject({ code: PROTOCOL_ERROR_JOB_ERROR.code });
    expect((await client.experimental.tasks.getTask(erring)).status).toBe('failed');
  });

  it('asks confirm_delete’s one question related to its task, and deletes on a yes', async () => {
    const taskId = await startTask('confirm_delete', { filename: 'a.txt' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('input_required');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'deleted' }]);
    expect(asked.map(request => request.params)).toEqual([
      expect.objectContaining({
        message: 'Delete the file?',
        _meta: { [RELATED_TASK]: { taskId } },
      }),
    ]);
  });

  it('asks multi_input’s two questions at once, and completes with both answers', async () => {
    const taskId = await startTask('multi_input');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Ada Lovelace' }]);
    expect(asked.map(request => request.params.message)).toEqual(['First name?', 'Last name?']);
  });

  it('asks test_tool_with_task’s name on the call before its task, and greets the name', async () => {
    const taskId = await startTask('test_tool_with_task');
    expect(asked).toHaveLength(1);
    expect(asked[0].params).toMatchObject({ message: 'What is your name?' });
    expect(asked[0].params._meta?.[RELATED_TASK]).toBeUndefined();
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
  });
});
