/*
 * The tasks fixture's 2026-07-28 half (docs/contracts/tasks-and-apps.md §7–§8): a stateless MCP
 * server with the tasks extension `io.modelcontextprotocol/tasks` (SEP-2663), written without an
 * SDK (the SDK v2 server has no tasks extension) so every wire field is the extension's own:
 * `server/discover` declares the extension, a task-supporting `tools/call` of a declaring client
 * answers a flat `CreateTaskResult` (`resultType: "task"`), `tasks/get` answers the
 * `DetailedTask` (input requests, result or error inlined), `tasks/update` takes input answers,
 * `tasks/cancel` acknowledges, `subscriptions/listen` with `taskIds` carries
 * `notifications/tasks`. `tasks/result` and `tasks/list` do not exist in this revision (-32601).
 *
 * Tools: the ones the official conformance task scenarios require (`greet`, `slow_compute`,
 * `failing_job`, `protocol_error_job`, `confirm_delete`, `multi_input`, `test_tool_with_task`)
 * and the broker tests' own: `deploy {target}` (a task the test ends with `finish`), `approve
 * {target}` (a task that asks one question), `sign_in {url}` (a task that asks the person to
 * open `url`: a URL-mode elicitation) and `nap` (answers at once even to a declaring client, so a
 * broker must make its own task for a 2025-11-25 caller). Tools whose task support
 * is "required" answer a client that did not declare the extension with -32021.
 *
 * Checks as SEP-2243 and SEP-2663 ask: `Mcp-Method` must equal the body's method, and `Mcp-Name`
 * the tool name of `tools/call` or the `taskId` of `tasks/get`/`update`/`cancel` (-32020, HTTP
 * 400). Tasks are bound to the credential (`Authorization`) that created them. Every request
 * is recorded, and every task message sent or received is kept with the ext-tasks schema it
 * must satisfy (`taskMessages`, checked by validateTaskMessages).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readJsonBody } from './legacySessions';
import {
  detailedTask,
  type ElicitAnswer,
  formRequest,
  type ModernTask,
  ModernTaskJobs,
  textResult,
  type ToolResult,
  urlRequest,
} from './modernTaskJobs';
import type { RecordedTaskMessage } from './validateTaskMessages';
import { DeployJobs } from './deployJobs';
import type { RecordedTaskRequest, TasksServer } from './tasksServer';

/** The extension's id. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';
const CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';
const MODERN_VERSION = '2026-07-28';

/** A running 2026-07-28 tasks fixture. */
export interface ModernTasksServer extends TasksServer {
  /** Every task message sent or received, with the ext-tasks schema it must satisfy. */
  readonly taskMessages: readonly RecordedTaskMessage[];
  /** Forgets every task, as a restarted server would (their ids become unknown). */
  forgetTasks(): void;
}

type Json = Record<string, any>;

/** An answer to one request: its HTTP status and JSON-RPC body. */
interface Answer {
  status: number;
  body: Json;
}

class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly httpStatus = 200,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

const TOOLS: Array<{ name: string; description: string; properties?: Json }> = [
  { name: 'greet', description: 'Says hello (no task)', properties: { name: { type: 'string' } } },
  {
    name: 'slow_compute',
    description: 'Sleeps `seconds`, as a task for a client that takes tasks',
    properties: { seconds: { type: 'number' }, label: { type: 'string' } },
  },
  { name: 'failing_job', description: 'A task (required) that ends with a tool error' },
  { name: 'protocol_error_job', description: 'A task that ends with a protocol error' },
  { name: 'confirm_delete', description: 'A task that asks one question' },
  { name: 'multi_input', description: 'A task that asks two questions at once' },
  {
    name: 'test_tool_with_task',
    description: 'Asks a name (input_required round), then finishes as a task (required)',
  },
  {
    name: 'deploy',
    description: 'Deploys a target; a task (required) the test finishes',
    properties: { target: { type: 'string' } },
  },
  {
    name: 'approve',
    description: 'Asks whether to approve a target; a task (required)',
    properties: { target: { type: 'string' } },
  },
  {
    name: 'sign_in',
    description: 'Asks the person to open `url` (a URL elicitation); a task (required)',
    properties: { url: { type: 'string' } },
  },
  { name: 'nap', description: 'Answers at once, even to a client that takes tasks' },
];

/** The ext-tasks schema of each task request. */
const REQUEST_SCHEMAS: Record<string, string> = {
  'tasks/get': 'GetTaskRequestV2Schema',
  'tasks/update': 'UpdateTaskRequestV2Schema',
  'tasks/cancel': 'CancelTaskRequestV2Schema',
};

/** Tools that cannot run without a task: -32021 for a client that did not declare the extension. */
const TASK_REQUIRED = new Set([
  'failing_job',
  'test_tool_with_task',
  'deploy',
  'approve',
  'sign_in',
]);

/** Starts the fixture's 2026-07-28 half on a free loopback port. */
export async function startModernTasksServer(): Promise<ModernTasksServer> {
  const jobs = new ModernTaskJobs();
  const requests: RecordedTaskRequest[] = [];
  const taskMessages: RecordedTaskMessage[] = [];
  const deploys = new DeployJobs();
  const listens = new Set<http.ServerResponse>();

  const onCreated = (task: ModernTask) => {
    if (task.tool !== 'deploy' || task.target === undefined) return;
    deploys.add({
      target: task.target,
      taskId: task.taskId,
      session: '',
      credential: task.credential,
    });
  };

  /** Runs a tool for a client that takes tasks; a task or an immediate result. */
  function runAsTask(name: string, args: Json, credential: string | undefined): Json {
    const immediate = immediateResult(name, args);
    if (immediate !== undefined) return { resultType: 'complete', ...immediate };
    const task = jobs.create(
      name,
      credential,
      typeof args.target === 'string' ? args.target : undefined,
    );
    startJob(jobs, task, args);
    onCreated(task);
    return { resultType: 'task', ...withoutInlined(detailedTask(task)) };
  }

  async function handle(req: http.IncomingMessage, body: unknown): Promise<Answer> {
    if (!isRecord(body) || typeof body.method !== 'string') {
      return { status: 400, body: rpcError(null, -32600, 'Invalid Request: a JSON-RPC request') };
    }
    const { id, method } = body;
    const params: Json = isRecord(body.params) ? body.params : {};
    const credential = req.headers.authorization;
    const mcpName = header(req, 'mcp-name');
    requests.push({
      method,
      ...(typeof params.taskId === 'string' && { taskId: params.taskId }),
      ...(credential !== undefined && { credential }),
      ...(mcpName !== undefined && { mcpName }),
      ...(isRecord(params._meta) && { meta: params._meta }),
      ...(req.url !== undefined && { path: req.url }),
    });
    if (id === undefined) return { status: 202, body: {} };
    try {
      checkHeaders(req, method, params);
      const declared = declaresTasks(params);
      const result = await dispatch(method, params, declared, credential, body);
      return { status: 200, body: { jsonrpc: '2.0', id, result } };
    } catch (error) {
      if (!(error instanceof RpcError)) throw error;
      return {
        status: error.httpStatus,
        body: rpcError(id, error.code, error.message, error.data),
      };
    }
  }

  async function dispatch(
    method: string,
    params: Json,
    declared: boolean,
    credential: string | undefined,
    request: Json,
  ): Promise<Json> {
    switch (method) {
      case 'server/discover':
        return {
          supportedVersions: [MODERN_VERSION],
          capabilities: { tools: {}, extensions: { [TASKS_EXTENSION]: {} } },
          serverInfo: { name: 'tasks-fixture', version: '1.0.0' },
          ttlMs: 0,
          cacheScope: 'public',
          resultType: 'complete',
        };
      case 'tools/list':
        return {
          tools: TOOLS.map(tool => ({
            name: tool.name,
            description: tool.description,
            inputSchema: { type: 'object', properties: tool.properties ?? {} },
          })),
          ttlMs: 0,
          cacheScope: 'public',
          resultType: 'complete',
        };
      case 'tools/call':
        return callTool(params, declared, credential);
      case 'tasks/get':
      case 'tasks/update':
      case 'tasks/cancel':
        return taskOperation(method, params, declared, credential, request);
      default:
        throw new RpcError(-32601, `Method not found: ${method}`, 404);
    }
  }

  async function callTool(params: Json, declared: boolean, credential: string | undefined) {
    const name = params.name;
    const args: Json = isRecord(params.arguments) ? params.arguments : {};
    if (!TOOLS.some(tool => tool.name === name)) {
      throw new RpcError(-32602, `Unknown tool: ${String(name).slice(0, 100)}`);
    }
    if (!declared && TASK_REQUIRED.has(name)) {
      throw missingTasksCapability();
    }
    if (name === 'test_tool_with_task') {
      const answer = isRecord(params.inputResponses) ? params.inputResponses.user_name : undefined;
      const userName =
        isRecord(answer) && isRecord(answer.content) ? answer.content.name : undefined;
      if (typeof userName !== 'string') {
        const round = {
          resultType: 'input_required',
          inputRequests: { user_name: formRequest('What is your name?', 'name', 'string') },
        };
        taskMessages.push({ schema: 'InputRequiredCallToolResultV2Schema', message: round });
        return round;
      }
      args.userName = userName;
    }
    if (declared) {
      const answer = runAsTask(name, args, credential);
      if (answer.resultType === 'task') {
        taskMessages.push({ schema: 'CreateTaskResultV2Schema', message: answer });
      }
      return answer;
    }
    return { resultType: 'complete', ...(await synchronousResult(name, args)) };
  }

  function taskOperation(
    method: string,
    params: Json,
    declared: boolean,
    credential: string | undefined,
    request: Json,
  ): Json {
    if (!declared) {
      throw missingTasksCapability();
    }
    taskMessages.push({ schema: REQUEST_SCHEMAS[method], message: request });
    const task =
      typeof params.taskId === 'string' ? jobs.find(params.taskId, credential) : undefined;
    if (task === undefined) {
      throw new RpcError(-32602, 'Failed to retrieve task: Task not found');
    }
    if (method === 'tasks/update') {
      if (!isRecord(params.inputResponses)) {
        throw new RpcError(-32602, 'tasks/update needs params.inputResponses (an object)');
      }
      // As a strict backend may: an input key named `refused-…` is refused as not found (the
      // extension says SHOULD ignore unknown keys; a backend may still refuse them).
      const unknown = Object.keys(params.inputResponses).find(key => key.startsWith('refused-'));
      if (unknown !== undefined) {
        throw new RpcError(-32602, `Input request "${unknown}" not found`);
      }
      jobs.answer(task, params.inputResponses);
      const ack = { resultType: 'complete' };
      taskMessages.push({ schema: 'UpdateTaskResultV2Schema', message: ack });
      return ack;
    }
    if (method === 'tasks/cancel') {
      jobs.cancel(task);
      const ack = { resultType: 'complete' };
      taskMessages.push({ schema: 'CancelTaskResultV2Schema', message: ack });
      return ack;
    }
    const got = { ...detailedTask(task), resultType: 'complete' };
    taskMessages.push({ schema: 'GetTaskResultV2Schema', message: got });
    return got;
  }

  /** `subscriptions/listen`: the acknowledgement, then `notifications/tasks` of agreed tasks. */
  function listen(req: http.IncomingMessage, res: http.ServerResponse, body: Json): void {
    const params: Json = isRecord(body.params) ? body.params : {};
    const wanted: Json = isRecord(params.notifications) ? params.notifications : {};
    const credential = req.headers.authorization;
    const asked = Array.isArray(wanted.taskIds) ? wanted.taskIds : undefined;
    if (asked !== undefined && !declaresTasks(params)) {
      const refusal = missingTasksCapability();
      send(
        res.writeHead(refusal.httpStatus, { 'content-type': 'application/json' }),
        rpcError(body.id, refusal.code, refusal.message, refusal.data),
        true,
      );
      return;
    }
    const agreed = (asked ?? []).filter(
      (taskId: unknown) => typeof taskId === 'string' && jobs.find(taskId, credential),
    ) as string[];
    const honoured: Json = {};
    for (const [kind, on] of Object.entries(wanted))
      if (kind !== 'taskIds' && on === true) honoured[kind] = true;
    if (asked !== undefined) honoured.taskIds = agreed;
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
    listens.add(res);
    send(res, {
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: { _meta: { [SUBSCRIPTION_ID]: body.id }, notifications: honoured },
    });
    const stop = jobs.onChange(task => {
      if (!agreed.includes(task.taskId)) return;
      const notification = {
        jsonrpc: '2.0',
        method: 'notifications/tasks',
        params: { ...detailedTask(task), _meta: { [SUBSCRIPTION_ID]: body.id } },
      };
      taskMessages.push({ schema: 'TaskStatusNotificationV2Schema', message: notification });
      send(res, notification);
    });
    res.on('close', () => {
      stop();
      listens.delete(res);
    });
  }

  const server = http.createServer((req, res) => {
    (async () => {
      const body = await readJsonBody(req);
      if (req.method !== 'POST') {
        res.writeHead(405, { allow: 'POST' }).end();
        return;
      }
      if (isRecord(body) && body.method === 'subscriptions/listen' && body.id !== undefined) {
        try {
          checkHeaders(req, body.method, isRecord(body.params) ? body.params : {});
        } catch (error) {
          if (!(error instanceof RpcError)) throw error;
          send(
            res.writeHead(error.httpStatus, { 'content-type': 'application/json' }),
            rpcError(body.id, error.code, error.message, error.data),
            true,
          );
          return;
        }
        requests.push({
          method: body.method,
          ...(req.headers.authorization !== undefined && { credential: req.headers.authorization }),
          ...(req.url !== undefined && { path: req.url }),
        });
        listen(req, res, body);
        return;
      }
      const answer = await handle(req, body);
      if (answer.status === 202) {
        res.writeHead(202).end();
        return;
      }
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    })().catch(error => {
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: String(error) }));
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    taskMessages,
    started: target => deploys.started(target),
    async finish(target, outcome) {
      const { taskId } = deploys.get(target);
      const task = jobs.all().find(t => t.taskId === taskId)!;
      jobs.complete(
        task,
        outcome === 'completed'
          ? textResult(`deployed ${target}`)
          : textResult(`deploying ${target} failed`, true),
      );
    },
    forgetTasks() {
      jobs.forget();
    },
    async close() {
      jobs.close();
      for (const res of listens) res.end();
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}

/** The 2026-07-28 refusal of a request that needs the tasks extension it did not declare. */
function missingTasksCapability(): RpcError {
  return new RpcError(-32021, 'Missing required client capability', 400, {
    requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
  });
}

/** `slow_compute`'s result. */
function computed(args: Json): ToolResult {
  return textResult(`computed ${String(args.label ?? '')}`.trim());
}

/** What a tool answers at once even to a client that takes tasks (undefined: it makes a task). */
function immediateResult(name: string, args: Json): ToolResult | undefined {
  if (name === 'greet') return textResult(`Hello, ${String(args.name ?? 'World')}!`);
  if (name === 'nap') return textResult('napped');
  if (name === 'slow_compute' && Number(args.seconds ?? 0) <= 0) {
    return computed(args);
  }
  return undefined;
}

/** What a tool answers to a client that did not declare the extension. */
async function synchronousResult(name: string, args: Json): Promise<ToolResult> {
  const immediate = immediateResult(name, args);
  if (immediate !== undefined) return immediate;
  if (name === 'slow_compute') {
    await new Promise(resolve => setTimeout(resolve, Number(args.seconds) * 1000));
    return computed(args);
  }
  if (name === 'protocol_error_job') throw new RpcError(-32603, 'Internal error: the job crashed');
  if (name === 'confirm_delete' || name === 'multi_input') {
    throw missingTasksCapability();
  }
  throw new RpcError(-32603, `Tool ${name} has no synchronous form`);
}

/** Starts the job of a new task. */
function startJob(jobs: ModernTaskJobs, task: ModernTask, args: Json): void {
  switch (task.tool) {
    case 'slow_compute':
      task.timer = setTimeout(
        () => jobs.complete(task, computed(args)),
        Number(args.seconds) * 1000,
      );
      return;
    case 'failing_job':
      task.timer = setTimeout(() => jobs.complete(task, textResult('the job failed', true)), 50);
      return;
    case 'protocol_error_job':
      task.timer = setTimeout(
        () => jobs.fail(task, { code: -32603, message: 'Internal error: the job crashed' }),
        50,
      );
      return;
    case 'confirm_delete':
      jobs.ask(task, { confirm: formRequest('Delete the file?', 'confirm', 'boolean') }, answers =>
        jobs.complete(task, textResult(accepted(answers.confirm, 'confirm') ? 'deleted' : 'kept')),
      );
      return;
    case 'multi_input':
      jobs.ask(
        task,
        {
          first: formRequest('First name?', 'name', 'string'),
          second: formRequest('Last name?', 'name', 'string'),
        },
        answers =>
          jobs.complete(
            task,
            textResult(
              `${String(answers.first?.content?.name)} ${String(answers.second?.content?.name)}`,
            ),
          ),
      );
      return;
    case 'test_tool_with_task':
      task.timer = setTimeout(
        () => jobs.complete(task, textResult(`Hello, ${String(args.userName)}!`)),
        50,
      );
      return;
    case 'approve':
      jobs.ask(
        task,
        { approval: formRequest(`Approve ${String(args.target)}?`, 'approve', 'boolean') },
        answers =>
          jobs.complete(
            task,
            textResult(
              `${accepted(answers.approval, 'approve') ? 'approved' : 'not approved'} ${String(args.target)}`,
            ),
          ),
      );
      return;
    case 'sign_in':
      jobs.ask(task, { link: urlRequest('Sign in to continue', String(args.url)) }, answers =>
        jobs.complete(
          task,
          textResult(answers.link?.action === 'accept' ? 'signed in' : 'not signed in'),
        ),
      );
      return;
    default:
      // deploy: ends when the test calls finish().
      return;
  }
}

function accepted(answer: ElicitAnswer | undefined, property: string): boolean {
  return answer?.action === 'accept' && answer.content?.[property] === true;
}

/** A task as `CreateTaskResult` shows it: no inlined input, result or error (SEP-2663). */
function withoutInlined(task: Json): Json {
  const { inputRequests: _input, result: _result, error: _error, ...rest } = task;
  return rest;
}

/** Whether the request declared the tasks extension in its client capabilities. */
function declaresTasks(params: Json): boolean {
  const meta = isRecord(params._meta) ? params._meta : {};
  const capabilities = meta[CLIENT_CAPABILITIES];
  return (
    isRecord(capabilities) &&
    isRecord(capabilities.extensions) &&
    isRecord(capabilities.extensions[TASKS_EXTENSION])
  );
}

/** SEP-2243's header rules for the methods this fixture serves (-32020, HTTP 400). */
function checkHeaders(req: http.IncomingMessage, method: string, params: Json): void {
  const sentMethod = header(req, 'mcp-method');
  if (sentMethod !== method) {
    throw new RpcError(
      -32020,
      sentMethod === undefined
        ? `Header mismatch: the Mcp-Method header is required (${method})`
        : `Header mismatch: Mcp-Method header "${sentMethod}" differs from the method "${method}"`,
      400,
    );
  }
  let named: unknown;
  if (method === 'tools/call') named = params.name;
  else if (method in REQUEST_SCHEMAS) named = params.taskId;
  if (named === undefined) return;
  const sentName = header(req, 'mcp-name');
  if (sentName !== named) {
    throw new RpcError(
      -32020,
      sentName === undefined
        ? `Header mismatch: the Mcp-Name header is required for ${method}`
        : `Header mismatch: Mcp-Name header "${sentName}" differs from the body`,
      400,
    );
  }
}

function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return typeof value === 'string' ? value : undefined;
}

function rpcError(id: unknown, code: number, message: string, data?: unknown): Json {
  return {
    jsonrpc: '2.0',
    id: id ?? null,
    error: { code, message, ...(data !== undefined && { data }) },
  };
}

function send(res: http.ServerResponse, message: Json, end = false): void {
  if (end) {
    res.end(JSON.stringify(message));
    return;
  }
  res.write(`event: message\ndata: ${JSON.stringify(message)}\n\n`);
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
