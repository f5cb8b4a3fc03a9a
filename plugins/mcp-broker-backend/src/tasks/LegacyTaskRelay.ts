/*
 * Long-running tasks between 2025-11-25 clients and 2025-11-25 backends
 * (docs/contracts/tasks-and-apps.md §2.5–§2.9, §2.11, §2.12.1, §2.13). Knows no HTTP: the router
 * hands it a person's request and writes what it answers.
 *
 * - Create: a `tools/call` with `params.task` reserves a slot under the person's bound (E7 when
 *   full), goes to the backend with `task.ttl` capped by `maxTtl`, and the backend's
 *   `CreateTaskResult` leaves with the broker id only once the row is written (E9 and a
 *   best-effort `tasks/cancel` when it cannot be). A plain answer releases the slot and passes.
 * - The backend session a task is created on is pinned: this relay opens its own sessions (one
 *   per server and person on each replica), apart from the clients' session pools, so ending a
 *   client session — or this replica — never DELETEs one; the row names it, and any replica
 *   sends `tasks/get`, `tasks/result` and `tasks/cancel` there with the backend's id.
 * - Every operation finds the row (E1 for unknown and foreign ids alike, E2 for the owner's
 *   expired one), checks the server's identity and the caller's `mcp-broker.tool.use` of the
 *   task's tool again (E1), and only then reaches the backend. The backend's answers come back
 *   with broker ids (also in `_meta["io.modelcontextprotocol/related-task"]`) and are
 *   observations of the row (compare-and-set). A backend that no longer knows the task: E3,
 *   the row is deleted.
 * - `tasks/list` is answered from the table, per person, with the broker's cursors.
 * Every operation is one `mcp-broker.task` audit event (TaskAuditor).
 *
 * Not here yet (contract Status): the 2026-07-28 extension and the era mixes, the watcher and
 * `notifications/tasks/status`, a pinned session's DELETE after its last task, the replacement
 * of a pinned session the backend forgot, and servers that act with each person's credential.
 */
import type { BrokerServerConfig, TasksConfig } from '../config';
import type { LegacyChannel, LegacySession } from '../backend/LegacyChannel';
import { BackendError, toClientError } from '../backend/backendErrors';
import { withTraceMeta } from '../telemetry/traceContext';
import { serverIdentityOf } from '../identity/serverIdentity';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcResponse,
} from '../protocol/jsonRpc';
import { legacyTaskOf, RELATED_TASK_META, type LegacyTask } from '../protocol/legacyTasks';
import { LATEST_PROTOCOL_VERSION } from '../protocol/versions';
import type { TaskAuditor, TaskOperation, TaskOutcome } from './TaskAuditor';
import { newBrokerTaskId } from './brokerTaskId';
import { decodeTaskListCursor, encodeTaskListCursor } from './taskListCursor';
import { INVALID_TASK_CURSOR, taskLimitReached, taskLost, taskNotRecorded } from './taskErrors';
import type { StoredTask, TaskState, TaskStore } from './TaskStore';
import { backendOfTask, findOwnTask, type FoundTask, type TaskCaller } from './findOwnTask';
import { observedTaskState } from './observedTaskState';
import { taskRefusal as refusal, type TaskReply } from './TaskReply';

/** Items per `tasks/list` page. */
export const TASK_LIST_PAGE_SIZE = 50;
/** Extra life of a pending slot beyond the tool call timeout (its replica died meanwhile). */
export const PENDING_SLOT_GRACE_MS = 60_000;

/** A backend as the relay reaches it. */
export interface TaskBackend {
  readonly server: BrokerServerConfig;
  readonly channel: LegacyChannel;
  /** Its session declared task-augmented `tools/call`. */
  readonly supportsTaskCalls: boolean;
}

/** Options of {@link LegacyTaskRelay}. */
export interface LegacyTaskRelayOptions {
  store: TaskStore;
  config: TasksConfig;
  /** A `tools/call` that creates a task answers within this (then the slot lapses). */
  toolCallTimeoutMs: number;
  /** The live backend of a server name (servers come and go at runtime). */
  backendOf: (server: string) => TaskBackend | undefined;
  auditor?: TaskAuditor;
  now?: () => number;
}

/** See the file comment. */
export class LegacyTaskRelay {
  /** This replica's pinned task sessions, by server identity and person. */
  private readonly sessions = new Map<string, Promise<LegacySession>>();
  private nextRequestId = 1;
  private readonly now: () => number;

  constructor(private readonly options: LegacyTaskRelayOptions) {
    this.now = options.now ?? Date.now;
  }

  /** True when a task-augmented call of `server`'s tools is relayed as a task. */
  relays(server: string): boolean {
    return (
      this.options.config.enabled && this.options.backendOf(server)?.supportsTaskCalls === true
    );
  }

  /** The broker task id a new task of `server` will have (audited before the backend is asked). */
  newTaskId(server: string): string {
    return newBrokerTaskId(server);
  }

  /**
   * Relays a task-augmented `tools/call` of `tool` (the server's own name) with `params` (its
   * routed params, `task` included) under the broker id `taskId`.
   */
  async create(
    caller: TaskCaller,
    input: {
      server: string;
      tool: string;
      toolAnnotations?: Record<string, unknown>;
      params: Record<string, unknown>;
      taskId: string;
      signal: AbortSignal;
    },
  ): Promise<TaskReply> {
    const started = performance.now();
    const backend = this.options.backendOf(input.server)!;
    const { store, config } = this.options;
    const now = this.now();
    const annotations =
      input.toolAnnotations === undefined ? undefined : JSON.stringify(input.toolAnnotations);
    const reserved = await store.reserve(
      {
        taskId: input.taskId,
        principal: caller.principal,
        server: input.server,
        serverIdentity: serverIdentityOf(backend.server),
        tool: input.tool,
        ...(annotations !== undefined && annotations.length <= 1024
          ? { toolAnnotations: annotations }
          : {}),
        credentialMode: 'broker',
        backendEra: 'legacy',
      },
      { perPerson: config.perPerson, retained: 4 * config.perPerson },
      now,
      now + this.options.toolCallTimeoutMs + PENDING_SLOT_GRACE_MS,
    );
    const audit = (outcome: TaskOutcome) =>
      this.audit(caller, 'create', outcome, started, input.server, input.tool, input.taskId);
    if (!reserved) {
      await audit('limited');
      return refusal(taskLimitReached(config.perPerson));
    }
    // The client's own trace context and baggage never reach a backend (contract §4).
    const params = withTraceMeta(withCappedTtl(input.params, config.maxTtlMs), undefined);
    let sent: { session: LegacySession; response: JsonRpcResponse };
    try {
      sent = await this.sendCall(backend, caller.principal, params, input.signal);
    } catch (error) {
      await store.release(input.taskId);
      return { error: toClientError(error), httpStatus: 200 };
    }
    const { session, response } = sent;
    const task = 'result' in response ? legacyTaskOf(response.result.task) : undefined;
    if (task === undefined || !('result' in response)) {
      // Answered without a task (an error, or at once): the slot goes, the answer passes.
      await store.release(input.taskId);
      return 'error' in response
        ? { error: response.error, httpStatus: 200 }
        : { result: response.result };
    }
    let recorded: StoredTask | undefined;
    try {
      recorded = await store.activate(
        input.taskId,
        {
          backendTaskId: task.taskId,
          ...(session.id === undefined ? {} : { backendSessionId: session.id }),
        },
        this.stateOf(task),
      );
    } catch {
      recorded = undefined;
    }
    if (recorded === undefined) {
      // The client must never get an id the broker cannot find.
      await this.send(
        backend,
        session.id,
        'tasks/cancel',
        { taskId: task.taskId },
        input.signal,
      ).catch(() => undefined);
      return refusal(taskNotRecorded(input.server));
    }
    return {
      result: { ...withRelatedTask(response.result, recorded), task: this.shown(recorded, task) },
    };
  }

  /** `tasks/get`: the task as the backend shows it now. */
  get(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'get', async (task, backend) => {
      const response = await this.sendOnTask(backend, task, 'tasks/get', signal);
      return this.taskAnswer(task, response);
    });
  }

  /**
   * `tasks/result`: waits for the backend's final answer of the task (no tool call timeout: until
   * the task expires or `signal` aborts — the client going away cancels nothing).
   */
  result(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'result', async (task, backend) => {
      const response = await this.sendOnTask(
        backend,
        task,
        'tasks/result',
        signal,
        Math.max(1, task.expiresAt - this.now()),
      );
      const answer =
        'error' in response
          ? await this.backendError(task, response.error)
          : { result: withRelatedTask(response.result, task) };
      // The task has ended: its row must stop counting as open (no watcher reads it yet).
      if (!isLost(answer)) await this.refresh(task, backend, signal);
      return answer;
    });
  }

  /** `tasks/cancel`: the backend cancels; a terminal task's refusal passes unchanged. */
  cancel(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'cancel', async (task, backend) => {
      const response = await this.sendOnTask(backend, task, 'tasks/cancel', signal);
      if ('error' in response && /terminal/i.test(response.error.message)) {
        await this.refresh(task, backend, signal);
        return { error: response.error, httpStatus: 200 };
      }
      return this.taskAnswer(task, response);
    });
  }

  /** `tasks/list`: the caller's tasks from the table, newest first, a page at a time. */
  async list(caller: TaskCaller, cursor: unknown): Promise<TaskReply> {
    const started = performance.now();
    const after = cursor === undefined ? undefined : decodeTaskListCursor(cursor);
    if (cursor !== undefined && after === undefined) {
      await this.audit(caller, 'list', 'failed', started);
      return refusal(INVALID_TASK_CURSOR);
    }
    const now = this.now();
    const rows = await this.options.store.listOf(caller.principal, now, { after });
    const shown = rows.filter(row => this.usable(caller, row));
    const page = shown.slice(0, TASK_LIST_PAGE_SIZE);
    const last = page[page.length - 1];
    await this.audit(caller, 'list', 'succeeded', started);
    return {
      result: {
        tasks: page.map(row => this.shown(row)),
        ...(shown.length > page.length && last !== undefined
          ? { nextCursor: encodeTaskListCursor(last) }
          : {}),
      },
    };
  }

  /** Steps 2–7 of contract §2.7 around one backend operation, audited. */
  private async operate(
    caller: TaskCaller,
    taskId: unknown,
    operation: TaskOperation,
    run: (task: StoredTask, backend: TaskBackend) => Promise<TaskReply>,
  ): Promise<TaskReply> {
    const started = performance.now();
    const found = await this.find(caller, taskId);
    if ('refusal' in found) {
      await this.audit(
        caller,
        operation,
        found.outcome,
        started,
        found.task?.server,
        found.task?.tool,
        found.task?.taskId,
      );
      return refusal(found.refusal);
    }
    const { task, backend } = found;
    let reply: TaskReply;
    try {
      reply = await run(task, backend);
    } catch (error) {
      if (isSessionLost(error)) {
        // The pinned session is gone, and the backend's tasks with it (contract §2.13 E3).
        await this.options.store.delete(task.taskId).catch(() => undefined);
        reply = refusal(taskLost(task.server));
      } else {
        reply = { error: toClientError(error), httpStatus: 200 };
      }
    }
    await this.audit(
      caller,
      operation,
      'error' in reply ? 'failed' : 'succeeded',
      started,
      task.server,
      task.tool,
      task.taskId,
    );
    return reply;
  }

  /** The caller's usable task `taskId`, or the refusal and why (contract §2.7 steps 3–6). */
  private find(caller: TaskCaller, taskId: unknown): Promise<FoundTask<TaskBackend>> {
    const { store, backendOf } = this.options;
    return findOwnTask(store, backendOf, 'legacy', caller, taskId, this.now());
  }

  /** Whether a row may be listed to the caller (same rules as an operation, without writes). */
  private usable(caller: TaskCaller, task: StoredTask): boolean {
    return this.backendOfTask(task) !== undefined && caller.mayUse(task.server, task.tool);
  }

  /** The task's server, if it is still configured with the identity the task was made on. */
  private backendOfTask(task: StoredTask): TaskBackend | undefined {
    return backendOfTask(this.options.backendOf, task);
  }

  /** A backend answer that is a `Task` (tasks/get, tasks/cancel): observed, shown with our id. */
  private async taskAnswer(task: StoredTask, response: JsonRpcResponse): Promise<TaskReply> {
    if ('error' in response) return this.backendError(task, response.error);
    const seen = legacyTaskOf(response.result);
    if (seen === undefined) return { result: withRelatedTask(response.result, task) };
    const state = this.stateOf(seen);
    await this.options.store.observe(task.taskId, task.version, state).catch(() => false);
    const observed: StoredTask = { ...task, ...state };
    return { result: { ...withRelatedTask(response.result, task), ...this.shown(observed, seen) } };
  }

  /**
   * The task-augmented `tools/call` on the person's pinned session. A session the backend forgot
   * before reading the call is replaced once: nothing ran, so one retry is safe (as tool calls do).
   */
  private async sendCall(
    backend: TaskBackend,
    principal: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<{ session: LegacySession; response: JsonRpcResponse }> {
    for (let attempt = 1; ; attempt += 1) {
      const session = await this.sessionOf(backend, principal);
      try {
        const response = await this.send(
          backend,
          session.id,
          'tools/call',
          params,
          signal,
          this.options.toolCallTimeoutMs,
        );
        return { session, response };
      } catch (error) {
        if (attempt > 1 || !isSessionLost(error)) throw error;
        await this.forgetSession(backend, principal, session);
      }
    }
  }

  /** Reads the task's state from the backend into its row (best effort). */
  private async refresh(task: StoredTask, backend: TaskBackend, signal: AbortSignal) {
    try {
      const response = await this.sendOnTask(backend, task, 'tasks/get', signal);
      if ('result' in response) await this.taskAnswer(task, response);
    } catch {
      // The next operation or the sweep sees it again.
    }
  }

  /** Drops the cached pinned session of `principal` at `backend` if it is still `session`. */
  private async forgetSession(backend: TaskBackend, principal: string, session: LegacySession) {
    const key = pinnedSessionKey(backend, principal);
    const cached = this.sessions.get(key);
    const current = await cached?.catch(() => undefined);
    if (current === session && this.sessions.get(key) === cached) this.sessions.delete(key);
  }

  /** A backend error on a task: "not found" means it lost the task (E3, row deleted). */
  private async backendError(task: StoredTask, error: JsonRpcErrorObject): Promise<TaskReply> {
    if (error.code === JsonRpcErrorCode.InvalidParams && /not found/i.test(error.message)) {
      await this.options.store.delete(task.taskId);
      return refusal(taskLost(task.server));
    }
    return { error, httpStatus: 200 };
  }

  /** The row's state from a backend `Task`, its ttl capped by `maxTtl`. */
  private stateOf(task: LegacyTask): TaskState {
    const { ttl, pollInterval, ...fields } = task;
    return observedTaskState(
      { ...fields, ttlMs: ttl, pollIntervalMs: pollInterval },
      this.options.config.maxTtlMs,
    );
  }

  /** A 2025-11-25 `Task` for a client: the broker id, the row's state (`seen` adds the rest). */
  private shown(task: StoredTask, seen?: LegacyTask): Record<string, unknown> {
    return {
      taskId: task.taskId,
      status: task.status,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      createdAt: task.createdAt ?? seen?.createdAt ?? new Date(task.recordedAt).toISOString(),
      lastUpdatedAt:
        task.lastUpdatedAt ?? seen?.lastUpdatedAt ?? new Date(task.recordedAt).toISOString(),
      ttl: task.ttlMs ?? null,
      ...(task.pollIntervalMs === undefined ? {} : { pollInterval: task.pollIntervalMs }),
    };
  }

  /** The pinned session of `principal` at `backend` on this replica (opened on first use). */
  private sessionOf(backend: TaskBackend, principal: string): Promise<LegacySession> {
    const key = pinnedSessionKey(backend, principal);
    let session = this.sessions.get(key);
    if (session === undefined) {
      // Declares nothing: input during a task is not relayed yet (contract Status).
      session = backend.channel.open({});
      this.sessions.set(key, session);
      session.catch(() => {
        if (this.sessions.get(key) === session) this.sessions.delete(key);
      });
    }
    return session;
  }

  /** Sends `method` about `task` (the backend's id) on the task's pinned backend session. */
  private sendOnTask(
    backend: TaskBackend,
    task: StoredTask,
    method: string,
    signal: AbortSignal,
    timeoutMs?: number,
  ): Promise<JsonRpcResponse> {
    return this.send(
      backend,
      task.backendSessionId,
      method,
      { taskId: task.backendTaskId },
      signal,
      timeoutMs,
    );
  }

  /** Sends `method` with `params` on the backend session `sessionId` and reads its response. */
  private async send(
    backend: TaskBackend,
    sessionId: string | undefined,
    method: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    timeoutMs?: number,
  ): Promise<JsonRpcResponse> {
    const { response } = await backend.channel.request(
      { jsonrpc: '2.0', id: `task-${this.nextRequestId++}`, method, params },
      { id: sessionId, protocolVersion: LATEST_PROTOCOL_VERSION },
      { signals: [signal], ...(timeoutMs === undefined ? {} : { timeoutMs }) },
    );
    return response;
  }

  private async audit(
    caller: TaskCaller,
    operation: TaskOperation,
    outcome: TaskOutcome,
    started: number,
    server?: string,
    tool?: string,
    taskId?: string,
  ): Promise<void> {
    await this.options.auditor?.record({
      principal: caller.principal,
      operation,
      outcome,
      durationMs: performance.now() - started,
      ...(caller.era === undefined ? {} : { clientEra: caller.era }),
      ...(server === undefined ? {} : { server }),
      ...(tool === undefined ? {} : { tool }),
      ...(taskId === undefined ? {} : { taskId }),
      ...(caller.traceId === undefined ? {} : { traceId: caller.traceId }),
    });
  }
}

/** `params` with `task.ttl` at most `maxTtlMs`. */
function withCappedTtl(params: Record<string, unknown>, maxTtlMs: number): Record<string, unknown> {
  const task = isPlainObject(params.task) ? params.task : {};
  return typeof task.ttl === 'number'
    ? { ...params, task: { ...task, ttl: Math.min(task.ttl, maxTtlMs) } }
    : { ...params, task };
}

/** `result` with its `related-task` meta naming the broker id instead of the backend's. */
function withRelatedTask(
  result: Record<string, unknown>,
  task: StoredTask,
): Record<string, unknown> {
  const meta = isPlainObject(result._meta) ? result._meta : undefined;
  if (meta === undefined || !isPlainObject(meta[RELATED_TASK_META])) return result;
  return {
    ...result,
    _meta: { ...meta, [RELATED_TASK_META]: { ...meta[RELATED_TASK_META], taskId: task.taskId } },
  };
}

/** The backend forgot the broker's session (restart, expiry). */
function isSessionLost(error: unknown): boolean {
  return error instanceof BackendError && error.reason === 'session-lost';
}

/** Whether an answer is E3 (the backend lost the task; its row is gone). */
function isLost(reply: TaskReply): boolean {
  return (
    'error' in reply && isPlainObject(reply.error.data) && reply.error.data.reason === 'task-lost'
  );
}

/** The key of a person's pinned session at a server (its identity: a new server gets new ones). */
function pinnedSessionKey(backend: TaskBackend, principal: string): string {
  return `${serverIdentityOf(backend.server)}\u0000${principal}`;
}
