/*
 * The tasks fixture of the broker's tests (docs/contracts/tasks-and-apps.md §8): an MCP server
 * that answers long tool calls with durable tasks. This is its 2025-11-25 half: SDK 1.x sessions
 * with the `tasks` capability (`list`, `cancel`, `requests.tools.call`) and the SDK's task store,
 * so the task wire messages (`CreateTaskResult`, `tasks/get`, `tasks/result`, `tasks/list`,
 * `tasks/cancel`, `notifications/tasks/status`) are the official SDK's own.
 *
 * Tools:
 * - `deploy {target}` (`taskSupport: required`): a job that runs until the test ends it with
 *   `finish(target, outcome)` — tests wait for states, never for time; `deployed <target>` when
 *   completed, an `isError` result when failed, or a `tasks/result` that is a JSON-RPC error
 *   (`failWithError`). Run as the development `jobs` server (`yarn start`,
 *   developmentServersMain.ts), where no test finishes it, each deploy completes on its own after
 *   `deployDurationMs`.
 * - `nap` (`taskSupport: optional`): answers at once (`napped`), with or without a task.
 * - `approve {target}` (`taskSupport: required`): a task that goes `input_required` at once and
 *   asks its client, as the 2025-11-25 tasks specification says, with a form `elicitation/create`
 *   related to the task (`_meta["io.modelcontextprotocol/related-task"]`), queued by the SDK and
 *   sent on the next `tasks/result` stream of its session; `approved <target>` when the answer
 *   accepts with `approved: true`, `declined <target>` otherwise, a failed task when the request
 *   fails (the client declared no form elicitation, or answered with an error).
 * - `confirm_deploy {target}` (`taskSupport: required`): asks first, on the call's own stream
 *   before any task exists (a form `elicitation/create` without `related-task`), then answers
 *   with a task already `completed`: `confirmed <target>` or `not confirmed <target>`.
 *
 * With `conformanceTools`, also the tools the official conformance task scenarios call
 * (legacyConformanceTools.ts).
 *
 * Tasks are bound twice, as a real server's would be: to the session that created them (the
 * SDK's store: another session sees "Task not found"), so a gateway must keep that backend
 * session for the task's life; and to the credential (`Authorization`) that created them — a
 * `tasks/*` request with another credential is answered as for an unknown task, proving the
 * gateway presents the owner's credential. Every request is recorded (method, task id,
 * credential) for assertions. `retireTool` takes a tool off the list (as a server update would)
 * while its tasks stay reachable.
 */
import { McpServer, type RegisteredTool } from '@modelcontextprotocol/sdk/server/mcp.js';
import type {
  CreateTaskRequestHandlerExtra,
  TaskRequestHandlerExtra,
} from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { InMemoryTaskMessageQueue } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import {
  ElicitResultSchema,
  McpError,
  type CallToolResult,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type DeployJob, DeployJobs } from './deployJobs';
import { registerLegacyConformanceTools } from './legacyConformanceTools';
import { type LegacySessions, legacySessions, listenLegacySessions } from './legacySessions';
import { SurvivingTaskStore } from './survivingTaskStore';

/** How long a task lives when the requestor asks for no `ttl` (ms). */
export const DEFAULT_TASK_TTL_MS = 60_000;
/** The `pollInterval` the fixture suggests (ms). */
export const TASK_POLL_INTERVAL_MS = 100;

/** One request the fixture received. */
export interface RecordedTaskRequest {
  method: string;
  /** `params.taskId` of a `tasks/*` request. */
  taskId?: string;
  /** The `Authorization` header it came with. */
  credential?: string;
  /** The session it named (`Mcp-Session-Id`). */
  session?: string;
  /** The `Mcp-Name` header (2026-07-28 half). */
  mcpName?: string;
  /** `params._meta` (2026-07-28 half: client capabilities, trace context). */
  meta?: Record<string, unknown>;
  /** The request's path and query (every path answers: a test can tell its gateways apart). */
  path?: string;
  /** The `traceparent` HTTP header (2025-11-25 half). */
  traceparent?: string;
}

/** A JSON-RPC response a client sent the fixture (an answer to its `elicitation/create`). */
export interface RecordedTaskAnswer {
  /** The response's `id` as it arrived. */
  id: unknown;
  /** The session it named (`Mcp-Session-Id`). */
  session?: string;
  result?: unknown;
  error?: unknown;
}

/** A running tasks fixture. */
export interface TasksServer {
  url: string;
  /** Every request received, in order. */
  readonly requests: readonly RecordedTaskRequest[];
  /** Resolves with the job once a `deploy` of `target` has created its task. */
  started(target: string): Promise<DeployJob>;
  /** Ends the running `deploy` of `target` (completed: `deployed <target>`; failed: an error). */
  finish(target: string, outcome: 'completed' | 'failed'): Promise<void>;
  close(): Promise<void>;
}

/** The 2025-11-25 half, which can also forget its sessions as a restarted server would. */
export interface LegacyTasksServer extends TasksServer {
  /** The JSON-RPC responses clients sent (answers to `approve`'s questions), in order. */
  readonly answers: readonly RecordedTaskAnswer[];
  /**
   * Ends every session (later requests naming one get 404); their tasks go with them, unless
   * `keepTasks` (a server with durable tasks restarted): then any new session of the task's
   * credential reaches them.
   */
  forgetSessions(options?: { keepTasks?: boolean }): Promise<void>;
  /**
   * Takes `tool` off the tools list of every session, open and future (each open one is told
   * with `notifications/tools/list_changed`); its tasks stay reachable with `tasks/*`.
   */
  retireTool(tool: 'deploy' | 'nap'): void;
  /** The sessions a client ended with HTTP DELETE, in order. */
  readonly deletedSessions: readonly string[];
  /**
   * Ends the running `deploy` of `target` as `failed` whose `tasks/result` is the JSON-RPC error
   * `error` (a protocol error, not a tool error).
   */
  failWithError(target: string, error: { code: number; message: string }): Promise<void>;
}

/**
 * The SDK's task store, whose `tasks/result` of a task in `errors` is that JSON-RPC error (the
 * SDK answers `tasks/result` from the store: a thrown McpError is its error response).
 */
class ErringTaskStore extends SurvivingTaskStore {
  readonly errors = new Map<string, { code: number; message: string }>();

  async getTaskResult(taskId: string, sessionId?: string) {
    const error = this.errors.get(taskId);
    if (error !== undefined) throw new McpError(error.code, error.message);
    return super.getTaskResult(taskId, sessionId);
  }
}

/**
 * How long a `deploy` of the development `jobs` server runs before it completes (ms): `yarn
 * start` (developmentServersMain.ts) and the README walkthroughs' environment.
 */
export const DEVELOPMENT_DEPLOY_DURATION_MS = 15_000;

/** Options of {@link startTasksServer}. */
export interface TasksServerOptions {
  /** The port on 127.0.0.1; default a free one. */
  port?: number;
  /**
   * When set, each `deploy` completes on its own this many milliseconds after its task was
   * created (the development server, where no test calls `finish`); default: only `finish` ends
   * a deploy.
   */
  deployDurationMs?: number;
  /**
   * Also serve the tools the official conformance task scenarios call (legacyConformanceTools.ts;
   * §7 configuration 2); default: only the broker tests' own tools.
   */
  conformanceTools?: boolean;
}

/** Starts the fixture on a loopback port (a free one unless `options.port` names one). */
export async function startTasksServer(
  options: TasksServerOptions = {},
): Promise<LegacyTasksServer> {
  const store = new ErringTaskStore();
  // Where the SDK keeps a task's requests until a `tasks/result` of its session sends them.
  const queue = new InMemoryTaskMessageQueue();
  const requests: RecordedTaskRequest[] = [];
  const answers: RecordedTaskAnswer[] = [];
  const deletedSessions: string[] = [];
  const jobs = new DeployJobs();
  // The request being handled, so a tool can see its session and credential.
  const current = new Map<string | number, { session: string; credential?: string }>();
  // Deploys that end on their own (options.deployDurationMs), cleared on close.
  const timers = new Set<NodeJS.Timeout>();

  const endJob = async (job: DeployJob, outcome: 'completed' | 'failed') => {
    const result: CallToolResult =
      outcome === 'completed'
        ? { content: [{ type: 'text', text: `deployed ${job.target}` }] }
        : { content: [{ type: 'text', text: `deploying ${job.target} failed` }], isError: true };
    await store.storeTaskResult(job.taskId, outcome, result, job.session);
  };
  // Runs `run` after `delayMs` unless the fixture closes first; a failure is dropped (a task
  // cancelled or expired meanwhile keeps its end: the store refuses a second one).
  const later = (delayMs: number, run: () => Promise<void>) => {
    const timer = setTimeout(() => {
      timers.delete(timer);
      run().catch(() => {});
    }, delayMs);
    timers.add(timer);
  };
  const endLater = (job: DeployJob, delayMs: number) =>
    later(delayMs, () => endJob(job, 'completed'));
  const failWithError = async (
    taskId: string,
    session: string | undefined,
    error: { code: number; message: string },
  ) => {
    store.errors.set(taskId, error);
    await store.storeTaskResult(taskId, 'failed', { content: [] }, session);
  };
  // Each session's tools, and the tools taken off the list (retireTool).
  const registered: Array<Map<string, RegisteredTool>> = [];
  const retired = new Set<string>();

  const newServer = () => {
    const server = new McpServer(
      { name: 'tasks-fixture', version: '1.0.0' },
      {
        capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
        taskStore: store,
        taskMessageQueue: queue,
      },
    );
    const tools = new Map<string, RegisteredTool>();
    const deploy = server.experimental.tasks.registerToolTask(
      'deploy',
      {
        description:
          options.deployDurationMs === undefined
            ? 'Deploys a target; runs until the test finishes it'
            : `Deploys a target; takes ${options.deployDurationMs / 1000} s`,
        inputSchema: { target: z.string() },
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ target }, extra) => {
          const task = await newTask(extra);
          const caller = current.get(extra.requestId);
          const job: DeployJob = {
            target,
            taskId: task.taskId,
            session: extra.sessionId ?? caller?.session ?? '',
            credential: caller?.credential,
          };
          jobs.add(job);
          if (options.deployDurationMs !== undefined) endLater(job, options.deployDurationMs);
          return { task };
        },
        getTask: (_args, extra) => storedTask(extra),
        getTaskResult: (_args, extra) => storedResult(extra),
      },
    );
    const nap = server.experimental.tasks.registerToolTask(
      'nap',
      {
        description: 'Answers at once, with or without a task',
        execution: { taskSupport: 'optional' },
      },
      {
        createTask: async extra => {
          const task = await newTask(extra);
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', napped());
          return { task };
        },
        getTask: extra => storedTask(extra),
        getTaskResult: extra => storedResult(extra),
      },
    );
    server.experimental.tasks.registerToolTask(
      'approve',
      {
        description: 'Asks its client to approve deploying a target, during the task',
        inputSchema: { target: z.string() },
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ target }, extra) => {
          const task = await newTask(extra);
          const session = extra.sessionId;
          await store.updateTaskStatus(task.taskId, 'input_required', undefined, session);
          // The question waits in the SDK's queue for the next `tasks/result` of this session.
          server.server
            .elicitInput(
              {
                mode: 'form',
                message: `Approve deploying ${target}?`,
                requestedSchema: {
                  type: 'object',
                  properties: { approved: { type: 'boolean' } },
                  required: ['approved'],
                },
              },
              { relatedTask: { taskId: task.taskId } },
            )
            .then(
              async answer => {
                const approved = answer.action === 'accept' && answer.content?.approved === true;
                await store.storeTaskResult(
                  task.taskId,
                  'completed',
                  {
                    content: [
                      { type: 'text', text: `${approved ? 'approved' : 'declined'} ${target}` },
                    ],
                  },
                  session,
                );
              },
              async (error: unknown) => {
                await store.storeTaskResult(
                  task.taskId,
                  'failed',
                  { content: [{ type: 'text', text: `asking failed: ${error}` }], isError: true },
                  session,
                );
              },
            )
            .catch(() => undefined);
          return { task };
        },
        getTask: (_args, extra) => storedTask(extra),
        getTaskResult: (_args, extra) => storedResult(extra),
      },
    );
    server.experimental.tasks.registerToolTask(
      'confirm_deploy',
      {
        description: 'Asks to confirm deploying a target, then answers with a finished task',
        inputSchema: { target: z.string() },
        execution: { taskSupport: 'required' },
      },
      {
        createTask: async ({ target }, extra) => {
          const answer = await extra.sendRequest(
            {
              method: 'elicitation/create',
              params: {
                mode: 'form',
                message: `Deploy ${target}?`,
                requestedSchema: {
                  type: 'object',
                  properties: { confirmed: { type: 'boolean' } },
                  required: ['confirmed'],
                },
              },
            },
            ElicitResultSchema,
          );
          const confirmed = answer.action === 'accept' && answer.content?.confirmed === true;
          const task = await newTask(extra);
          await extra.taskStore.storeTaskResult(task.taskId, 'completed', {
            content: [
              { type: 'text', text: `${confirmed ? 'confirmed' : 'not confirmed'} ${target}` },
            ],
          });
          return { task };
        },
        getTask: (_args, extra) => storedTask(extra),
        getTaskResult: (_args, extra) => storedResult(extra),
      },
    );
    if (options.conformanceTools) {
      registerLegacyConformanceTools(server, { store, newTask, later, failWithError });
    }
    tools.set('deploy', deploy).set('nap', nap);
    for (const name of retired) tools.get(name)!.disable();
    registered.push(tools);
    const onClosed = () => {
      const index = registered.indexOf(tools);
      if (index >= 0) registered.splice(index, 1);
    };
    return { server, onClosed };
  };

  const sessions = legacySessions(newServer);
  const serving: LegacySessions = {
    async serve(req, res, body) {
      const credential = req.headers.authorization;
      const session = req.headers['mcp-session-id'];
      const message = isRecord(body) ? body : undefined;
      const method = typeof message?.method === 'string' ? message.method : undefined;
      const params = isRecord(message?.params) ? message.params : undefined;
      const taskId = typeof params?.taskId === 'string' ? params.taskId : undefined;
      if (req.method === 'DELETE' && typeof session === 'string') deletedSessions.push(session);
      if (method === undefined && message !== undefined && 'id' in message) {
        answers.push({
          id: message.id,
          ...(typeof session === 'string' && { session }),
          ...('result' in message && { result: message.result }),
          ...('error' in message && { error: message.error }),
        });
      }
      if (method !== undefined) {
        requests.push({
          method,
          ...(taskId !== undefined && { taskId }),
          ...(credential !== undefined && { credential }),
          ...(typeof session === 'string' && { session }),
          ...(isRecord(params?._meta) && { meta: params._meta }),
          ...(req.url !== undefined && { path: req.url }),
          ...(typeof req.headers.traceparent === 'string' && {
            traceparent: req.headers.traceparent,
          }),
        });
      }
      // A task is its creator's: another credential meets it as an unknown task.
      const job = taskId === undefined ? undefined : jobs.ofTask(taskId);
      if (job !== undefined && job.credential !== credential && message?.id !== undefined) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: message.id,
            error: { code: -32602, message: 'Failed to retrieve task: Task not found' },
          }),
        );
        return;
      }
      const id = message?.id;
      if ((typeof id === 'string' || typeof id === 'number') && typeof session === 'string') {
        current.set(id, { session, credential });
      }
      try {
        await sessions.serve(req, res, body);
      } finally {
        if (typeof id === 'string' || typeof id === 'number') current.delete(id);
      }
    },
    close: () => sessions.close(),
  };
  const listening = await listenLegacySessions(serving, options.port);

  return {
    url: listening.url,
    requests,
    answers,
    deletedSessions,
    started: target => jobs.started(target),
    finish: (target, outcome) => endJob(jobs.get(target), outcome),
    async forgetSessions(forgetting) {
      if (forgetting?.keepTasks) store.survive();
      else store.lose();
      await sessions.close();
    },
    retireTool(tool) {
      retired.add(tool);
      for (const tools of registered) tools.get(tool)!.disable();
    },
    async failWithError(target, error) {
      const job = jobs.get(target);
      await failWithError(job.taskId, job.session, error);
    },
    async close() {
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      store.cleanup();
      await listening.close();
    },
  };
}

/** A task as the requestor asked (its `ttl`, else the default), polled every 100 ms. */
function newTask(extra: CreateTaskRequestHandlerExtra) {
  return extra.taskStore.createTask({
    ttl: extra.taskRequestedTtl ?? DEFAULT_TASK_TTL_MS,
    pollInterval: TASK_POLL_INTERVAL_MS,
  });
}

/** The stored task a `tasks/get` names. */
async function storedTask(extra: TaskRequestHandlerExtra) {
  return (await extra.taskStore.getTask(extra.taskId))!;
}

/** The stored result a `tasks/result` names. */
async function storedResult(extra: TaskRequestHandlerExtra): Promise<CallToolResult> {
  return (await extra.taskStore.getTaskResult(extra.taskId)) as CallToolResult;
}

function napped(): CallToolResult {
  return { content: [{ type: 'text', text: 'napped' }] };
}

function isRecord(value: unknown): value is Record<string, any> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
