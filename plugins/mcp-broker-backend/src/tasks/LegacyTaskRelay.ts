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
 *   per server, person and declared client capabilities on each replica, PinnedSessions.ts),
 *   apart from the clients' session pools, so ending a client session — or this replica — never
 *   DELETEs one; the row names it, and any replica sends `tasks/get`, `tasks/result` and
 *   `tasks/cancel` there with the backend's id.
 * - Input (§2.12.1): the backend's requests on a `tasks/result` stream go to the client reading
 *   the result, on its own stream (LegacyTaskInput), and its answers back to the pinned session.
 * - Every operation finds the row (E1 for unknown and foreign ids alike, E2 for the owner's
 *   expired one), checks the server's identity and the caller's `mcp-broker.tool.use` of the
 *   task's tool again (E1), and only then reaches the backend. The backend's answers come back
 *   with broker ids (also in `_meta["io.modelcontextprotocol/related-task"]`) and are
 *   observations of the row (compare-and-set). A backend that no longer knows the task: E3,
 *   the row is deleted.
 * - `tasks/list` is answered from the table, per person, with the broker's cursors.
 * - The sweep of expired rows (`deleteExpired`, run by the broker's ExpirySweeper) DELETEs each
 *   pinned backend session whose last row it deleted (best effort, §2.11, PinnedSessions.ts); a
 *   session an unexpired row references is never ended.
 * - Every backend request is a CLIENT span of the client's request, its context in `_meta` and
 *   the headers (§4); the operation's SERVER span is named after the task's tool and linked to
 *   the creating request's span; tasks created, ended (once) and refused at the bound are
 *   counted (§2.14). The broker's drain waits for the requests in flight until its deadline,
 *   then cuts them with `shutting-down` (LegacyTaskRequests.ts). A removed server's rows go at
 *   its removal.
 * Every operation is one `mcp-broker.task` audit event (TaskAuditor).
 *
 * Every change of a task's state this replica writes (creation, observations that won the
 * compare-and-set) goes to `onObserved`, which publishes it (TaskNotifications); the watcher
 * (TaskWatcher) polls through `poll`.
 *
 * The era mixes build on this relay (CrossEraTaskRelay). A pinned session the backend forgot is
 * replaced once per request (replacePinnedSession.ts); lost there too, the task answers E3.
 * Servers that act with each person's credential get no task (the router runs their calls
 * plain, contract §11).
 */
import type { BrokerServerConfig, TasksConfig } from '../config';
import type { LegacyChannel, LegacySession } from '../backend/LegacyChannel';
import type { ChannelRequestOptions } from '../backend/BackendChannel';
import type { UrlElicitationPolicy } from '../calls/urlElicitations';
import {
  backendMalformedResponse,
  brokerShuttingDown,
  toClientError,
} from '../backend/backendErrors';
import type { BrokerMetrics } from '../telemetry/BrokerMetrics';
import { serverIdentityOf } from '../identity/serverIdentity';
import { isPlainObject, type JsonRpcErrorObject, type JsonRpcResponse } from '../protocol/jsonRpc';
import { legacyTaskOf, RELATED_TASK_META, type LegacyTask } from '../protocol/legacyTasks';
import { LATEST_PROTOCOL_VERSION } from '../protocol/versions';
import type { TaskAuditor, TaskOperation } from './TaskAuditor';
import { auditTaskOperation, type CallerTaskOperation } from './auditTaskOperation';
import { backendTaskError, withBrokerTaskId } from './backendTaskError';
import { reserveTaskSlot } from './reserveTaskSlot';
import { taskOfRow } from './taskOfRow';
import { newBrokerTaskId } from './brokerTaskId';
import { decodeTaskListCursor, encodeTaskListCursor } from './taskListCursor';
import { INVALID_TASK_CURSOR, taskLimitReached, taskLost, taskNotRecorded } from './taskErrors';
import { isTerminalStatus, type StoredTask, type TaskState, type TaskStore } from './TaskStore';
import { backendOfTask, findOwnTask, type FoundTask, type TaskCaller } from './findOwnTask';
import { observedTaskState } from './observedTaskState';
import { taskRefusal as refusal, type TaskReply } from './TaskReply';
import { observeTaskState, type ObservedChange } from './observeTaskState';
import { withLegacyFinalPayload } from './finalPayload';
import { isSessionLost, sendReplacingForgottenSession } from './replacePinnedSession';
import type { LegacyTaskPayload } from '../protocol/taskEraMapping';
import { LegacyTaskInput } from './LegacyTaskInput';
import { PinnedSessions, pinnedSessionKey } from './PinnedSessions';
import { LegacyTaskRequests } from './LegacyTaskRequests';

/** Items per `tasks/list` page. */
export const TASK_LIST_PAGE_SIZE = 50;

/** How an operation of {@link LegacyTaskRelay} is recorded. */
export interface OperationOptions {
  /** Whether it is its own `mcp-broker.task` event (default true). */
  readonly audited?: boolean;
}

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
  /** What a backend's URL elicitation during a task may point at; absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
  /** Counts tasks created, ended and refused at the bound (contract §2.14). */
  metrics?: Pick<BrokerMetrics, 'taskCreated' | 'taskEnded' | 'taskLimitRefused'>;
  now?: () => number;
  /**
   * Called with each change of a task this replica wrote (a creation, or an observation that
   * won the compare-and-set, contract §2.10): publish it. Must not throw.
   */
  onObserved?: (change: ObservedChange) => Promise<void>;
}

/** See the file comment. */
export class LegacyTaskRelay {
  /** This replica's pinned task sessions (PinnedSessions.ts). */
  private readonly pinned: PinnedSessions;
  private readonly now: () => number;
  /** The backend requests: traced, waited for by the drain, cut at its deadline. */
  private readonly requests = new LegacyTaskRequests();

  constructor(private readonly options: LegacyTaskRelayOptions) {
    this.now = options.now ?? Date.now;
    this.pinned = new PinnedSessions(options.backendOf);
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
    const reserved = await reserveTaskSlot(
      store,
      config,
      {
        taskId: input.taskId,
        principal: caller.principal,
        server: input.server,
        serverIdentity: serverIdentityOf(backend.server),
        tool: input.tool,
        toolAnnotations: input.toolAnnotations,
        backendEra: 'legacy',
        // The creating SERVER span: every later operation's span links to it.
        ...(caller.telemetry?.traceparent === undefined
          ? {}
          : { creatingTrace: caller.telemetry.traceparent }),
      },
      now,
      this.options.toolCallTimeoutMs,
    );
    if (!reserved) {
      this.options.metrics?.taskLimitRefused(input.server);
      await this.audit(caller, { operation: 'create', outcome: 'limited', started, task: input });
      return refusal(taskLimitReached(config.perPerson));
    }
    const params = withCappedTtl(input.params, config.maxTtlMs);
    let sent: { session: LegacySession; response: JsonRpcResponse };
    try {
      sent = await this.sendCall(backend, caller, input.tool, params, input.signal, input.taskId);
    } catch (error) {
      await store.release(input.taskId);
      return this.failed(error, input.server);
    }
    const { session, response } = sent;
    const answered = 'result' in response ? response.result.task : undefined;
    const task = legacyTaskOf(answered);
    if (task === undefined && answered !== undefined) {
      // A task it cannot read: nothing of it (its id above all) may reach the client, and
      // nobody could reach it, so it is cancelled (best effort) and its slot goes.
      await store.release(input.taskId).catch(() => undefined);
      const backendTaskId =
        isPlainObject(answered) && typeof answered.taskId === 'string'
          ? answered.taskId
          : undefined;
      if (backendTaskId !== undefined) {
        await this.requests
          .send(
            { backend, caller, tool: input.tool },
            session.id,
            'tasks/cancel',
            { taskId: backendTaskId },
            input.signal,
          )
          .catch(() => undefined);
      }
      return this.failed(
        backendMalformedResponse(
          input.server,
          'a task-augmented call with a task it could not read',
        ),
        input.server,
      );
    }
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
      // The client must never get an id the broker cannot find; the slot goes at once.
      await store.release(input.taskId).catch(() => undefined);
      await this.requests
        .send(
          { backend, caller, tool: input.tool },
          session.id,
          'tasks/cancel',
          { taskId: task.taskId },
          input.signal,
        )
        .catch(() => undefined);
      return refusal(taskNotRecorded(input.server));
    }
    await this.options.onObserved?.({
      before: { ...recorded, status: 'pending', version: recorded.version - 1 },
      after: recorded,
    });
    this.options.metrics?.taskCreated(input.server, 'legacy', 'legacy');
    if (isTerminalStatus(recorded.status))
      this.options.metrics?.taskEnded(input.server, recorded.status);
    return {
      result: {
        ...withRelatedTask(response.result, recorded),
        task: taskOfRow(recorded, 'legacy', task),
      },
    };
  }

  /**
   * `tasks/get`: the task as the backend shows it now. `audited: false` for a step of an
   * operation its caller audits (§2.14: one event per operation).
   */
  get(
    caller: TaskCaller,
    taskId: unknown,
    signal: AbortSignal,
    { audited = true }: OperationOptions = {},
  ): Promise<TaskReply> {
    return this.operate(caller, taskId, audited ? 'get' : undefined, async (task, backend) => {
      const response = await this.sendOnTask(caller, backend, task, 'tasks/get', signal);
      return this.taskAnswer(task, response);
    });
  }

  /**
   * `tasks/result`: waits for the backend's final answer of the task (no tool call timeout: until
   * the task expires or `signal` aborts — the client going away cancels nothing). `audited`: as
   * for {@link LegacyTaskRelay.get}.
   */
  result(
    caller: TaskCaller,
    taskId: unknown,
    signal: AbortSignal,
    { audited = true }: OperationOptions = {},
  ): Promise<TaskReply> {
    return this.operate(caller, taskId, audited ? 'result' : undefined, async (task, backend) => {
      // The backend's requests on the stream go to the caller's own stream (§2.12.1).
      const input = this.inputOf(caller, backend, task.taskId, {
        id: task.backendSessionId,
        protocolVersion: LATEST_PROTOCOL_VERSION,
      });
      let response: JsonRpcResponse;
      try {
        response = await this.sendOnTask(
          caller,
          backend,
          task,
          'tasks/result',
          signal,
          Math.max(1, task.expiresAt - this.now()),
          input.onServerMessage,
        );
      } finally {
        await input.end();
      }
      const answer =
        'error' in response
          ? await this.backendError(task, response.error)
          : { result: withRelatedTask(response.result, task) };
      // The task has ended: its row must stop counting as open (the watcher reads it only while
      // its person listens).
      if (!isLost(answer))
        await this.refresh(caller, task, backend, signal, payloadOf(response, task));
      return answer;
    });
  }

  /** `tasks/cancel`: the backend cancels; a terminal task's refusal passes unchanged. */
  cancel(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'cancel', async (task, backend) => {
      const response = await this.sendOnTask(caller, backend, task, 'tasks/cancel', signal);
      if ('error' in response && /terminal/i.test(response.error.message)) {
        await this.refresh(caller, task, backend, signal);
        return { error: withBrokerTaskId(response.error, task), httpStatus: 200 };
      }
      return this.taskAnswer(task, response);
    });
  }

  /**
   * A watcher's poll (contract §2.10): reads task `taskId`'s state from its backend on its pinned
   * session into its row, as an observation (no caller: the watcher polls for the task's owner;
   * not audited). The row afterwards; undefined when the task is gone — no row, expired, its
   * server removed or replaced, or lost by the backend (its row deleted, as an operation does) —
   * or is not this relay's (a 2026-07-28 backend's task is never sent a 2025-11-25 request).
   * Throws when the backend fails otherwise.
   */
  async poll(taskId: string, signal: AbortSignal): Promise<StoredTask | undefined> {
    const { store } = this.options;
    const task = await store.get(taskId);
    if (
      task === undefined ||
      task.backendEra !== 'legacy' ||
      task.backendTaskId === undefined ||
      task.expiresAt <= this.now()
    ) {
      return undefined;
    }
    const backend = this.backendOfTask(task);
    if (backend === undefined) return undefined;
    try {
      // The watcher polls for the task's owner; no client request to trace.
      const owner = ownerOf(task);
      await this.taskAnswer(task, await this.sendOnTask(owner, backend, task, 'tasks/get', signal));
    } catch (error) {
      if (!isSessionLost(error)) throw error;
      await store.delete(task.taskId);
      return undefined;
    }
    return store.get(taskId);
  }

  /**
   * Reads task `task`'s `tasks/result` on its pinned session for the broker itself (the input
   * relay of a 2026-07-28 client's task, LegacyInputRelay), each other message of the stream to
   * `onServerMessage`; resolves with the final answer. For the task's owner; not audited.
   */
  readResult(
    task: StoredTask,
    backend: TaskBackend,
    onServerMessage: NonNullable<ChannelRequestOptions['onServerMessage']>,
    signal: AbortSignal,
  ): Promise<JsonRpcResponse> {
    const owner = ownerOf(task);
    const timeoutMs = Math.max(1, task.expiresAt - this.now());
    return this.sendOnTask(
      owner,
      backend,
      task,
      'tasks/result',
      signal,
      timeoutMs,
      onServerMessage,
    );
  }

  /** `tasks/list`: the caller's tasks from the table, newest first, a page at a time. */
  async list(caller: TaskCaller, cursor: unknown): Promise<TaskReply> {
    const started = performance.now();
    const after = cursor === undefined ? undefined : decodeTaskListCursor(cursor);
    if (cursor !== undefined && after === undefined) {
      await this.audit(caller, { operation: 'list', outcome: 'failed', started });
      return refusal(INVALID_TASK_CURSOR);
    }
    const now = this.now();
    const rows = await this.options.store.listOf(caller.principal, now, { after });
    const shown = rows.filter(row => this.usable(caller, row));
    const page = shown.slice(0, TASK_LIST_PAGE_SIZE);
    const last = page[page.length - 1];
    await this.audit(caller, { operation: 'list', outcome: 'succeeded', started });
    return {
      result: {
        tasks: page.map(row => taskOfRow(row, 'legacy')),
        ...(shown.length > page.length && last !== undefined
          ? { nextCursor: encodeTaskListCursor(last) }
          : {}),
      },
    };
  }

  /**
   * Deletes the expired rows; ends each pinned backend session whose last row this sweep deleted
   * (contract §2.11, best effort: a backend that is gone expires the session itself).
   */
  async deleteExpired(now: number): Promise<void> {
    const unpinned = await this.options.store.deleteExpired(now);
    await this.pinned.endUnpinned(unpinned);
  }

  /**
   * `server` was removed, or replaced under its name by another server (another identity): its
   * tasks go — their rows, and this replica's pinned sessions there (contract §2.5).
   */
  async forgetServer(server: BrokerServerConfig): Promise<void> {
    const identity = serverIdentityOf(server);
    this.pinned.forgetServer(server);
    await this.options.store.deleteOfServer(server.name, identity);
  }

  /**
   * The broker is shutting down: lets the task requests in flight finish until `timeoutMs` has
   * passed, then cuts them — a long `tasks/result` above all —, each answering `-32000`
   * `shutting-down`, retryable (contract §2.7). Resolves once none is left.
   */
  drain(timeoutMs: number): Promise<void> {
    return this.requests.drain(timeoutMs);
  }

  /**
   * Steps 2–7 of contract §2.7 around one backend operation, audited as `operation` (undefined:
   * a step of an operation audited by its caller).
   */
  private async operate(
    caller: TaskCaller,
    taskId: unknown,
    operation: TaskOperation | undefined,
    run: (task: StoredTask, backend: TaskBackend) => Promise<TaskReply>,
  ): Promise<TaskReply> {
    const started = performance.now();
    const found = await this.find(caller, taskId);
    if ('refusal' in found) {
      if (operation !== undefined) {
        await this.audit(caller, { operation, outcome: found.outcome, started, task: found.task });
      }
      return refusal(found.refusal);
    }
    const { task, backend } = found;
    // The request's SERVER span becomes `tasks/get <tool>`, linked to the creating trace.
    caller.telemetry?.routed({ server: task.server, tool: task.tool });
    if (task.creatingTrace !== undefined) caller.telemetry?.linkTo(task.creatingTrace);
    let reply: TaskReply;
    try {
      reply = await run(task, backend);
    } catch (error) {
      if (isSessionLost(error)) {
        // The pinned session is gone, and so was its replacement (contract §2.11, §2.13 E3).
        await this.options.store.delete(task.taskId).catch(() => undefined);
        reply = refusal(taskLost(task.server));
      } else {
        reply = this.failed(error, task.server);
      }
    }
    const outcome = 'error' in reply ? 'failed' : 'succeeded';
    if (operation !== undefined) await this.audit(caller, { operation, outcome, started, task });
    return reply;
  }

  /** The caller's usable task `taskId`, or the refusal and why (contract §2.7 steps 3–6). */
  private find(caller: TaskCaller, taskId: unknown): Promise<FoundTask<TaskBackend>> {
    const { store, backendOf } = this.options;
    return findOwnTask(store, backendOf, 'legacy', caller, taskId, this.now());
  }

  /** Whether a row may be listed to the caller (same rules as an operation, without writes). */
  private usable(caller: TaskCaller, task: StoredTask): boolean {
    return (
      this.backendOfTask(task) !== undefined &&
      caller.mayUse(task.server, task.tool, task.toolAnnotations)
    );
  }

  /** The task's server, if it is still configured with the identity the task was made on. */
  private backendOfTask(task: StoredTask): TaskBackend | undefined {
    return backendOfTask(this.options.backendOf, task);
  }

  /**
   * A backend answer that is a `Task` (tasks/get, tasks/cancel): observed, shown with our id. A
   * change that ends the task is published with its final payload (`finalPayload` when the
   * caller read it already, else read now: finalPayload.ts).
   */
  private async taskAnswer(
    task: StoredTask,
    response: JsonRpcResponse,
    finalPayload?: LegacyTaskPayload,
  ): Promise<TaskReply> {
    if ('error' in response) return this.backendError(task, response.error);
    const seen = legacyTaskOf(response.result);
    if (seen === undefined) return { result: withRelatedTask(response.result, task) };
    const state = this.stateOf(seen);
    const change = await observeTaskState(this.options.store, task, state).catch(() => undefined);
    if (change !== undefined) {
      // Counted by the observation that wrote the change to a terminal status: once per task.
      if (isTerminalStatus(change.after.status) && !isTerminalStatus(change.before.status)) {
        this.options.metrics?.taskEnded(task.server, change.after.status);
      }
      await this.options.onObserved?.(
        await this.withFinalPayload(
          finalPayload === undefined ? change : { ...change, finalPayload },
        ),
      );
    }
    const observed: StoredTask = { ...task, ...state };
    return {
      result: { ...withRelatedTask(response.result, task), ...taskOfRow(observed, 'legacy', seen) },
    };
  }

  /**
   * The task-augmented `tools/call` on the person's pinned session. A session the backend forgot
   * before reading the call is replaced once: nothing ran, so one retry is safe (as tool calls do).
   */
  private async sendCall(
    backend: TaskBackend,
    caller: TaskCaller,
    tool: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
    taskId: string,
  ): Promise<{ session: LegacySession; response: JsonRpcResponse }> {
    const { principal } = caller;
    const capabilities = caller.capabilities ?? {};
    for (let attempt = 1; ; attempt += 1) {
      const session = await this.pinned.sessionOf(backend, principal, capabilities);
      // What the backend asks before its answer goes to the caller's stream, as during a task.
      const input = this.inputOf(caller, backend, taskId, session);
      try {
        const response = await this.requests.send(
          { backend, caller, tool },
          session.id,
          'tools/call',
          params,
          signal,
          this.options.toolCallTimeoutMs,
          input.onServerMessage,
        );
        return { session, response };
      } catch (error) {
        if (attempt > 1 || !isSessionLost(error)) throw error;
        await this.pinned.forgetSession(
          pinnedSessionKey(backend, principal, capabilities),
          session,
        );
      } finally {
        await input.end();
      }
    }
  }

  /**
   * The relay of what `backend` asks on `session` during an exchange about task `taskId`: to the
   * caller's stream when it has one for the server, else refused (LegacyTaskInput).
   */
  private inputOf(
    caller: TaskCaller,
    backend: TaskBackend,
    taskId: string,
    session: Pick<LegacySession, 'id' | 'protocolVersion'>,
  ): LegacyTaskInput {
    const server = backend.server.name;
    return new LegacyTaskInput({
      server,
      taskId,
      channel: backend.channel,
      session: { id: session.id, protocolVersion: session.protocolVersion },
      asker: caller.askOn?.(server),
      capabilities: caller.capabilities,
      ...(this.options.urlElicitations === undefined
        ? {}
        : { urlElicitations: this.options.urlElicitations }),
    });
  }

  /** Reads the task's state from the backend into its row (best effort). */
  private async refresh(
    caller: TaskCaller,
    task: StoredTask,
    backend: TaskBackend,
    signal: AbortSignal,
    finalPayload?: LegacyTaskPayload,
  ) {
    try {
      const response = await this.sendOnTask(caller, backend, task, 'tasks/get', signal);
      if ('result' in response) await this.taskAnswer(task, response, finalPayload);
    } catch {
      // The next operation or the sweep sees it again.
    }
  }

  /** `change` with an ended task's final payload, read on its pinned session (finalPayload.ts). */
  private withFinalPayload(change: ObservedChange): Promise<ObservedChange> {
    const task = change.after;
    const backend = this.backendOfTask(task);
    if (backend === undefined) return Promise.resolve(change);
    // Read for the task's owner, like a watcher's poll; no client request to trace.
    const owner = ownerOf(task);
    return withLegacyFinalPayload(change, () =>
      this.sendOnTask(owner, backend, task, 'tasks/result', this.requests.stoppingSignal),
    );
  }

  /** The answer to a request to `server` that failed with `error` (cut by the shutdown, or not). */
  private failed(error: unknown, server: string): TaskReply {
    const failure = this.requests.stoppingSignal.aborted ? brokerShuttingDown(server) : error;
    return { error: toClientError(failure), httpStatus: 200 };
  }

  /** A backend error on a task: "not found" means it lost the task (E3, row deleted). */
  private backendError(task: StoredTask, error: JsonRpcErrorObject): Promise<TaskReply> {
    return backendTaskError(this.options.store, task, error);
  }

  /** The row's state from a backend `Task`, its ttl capped by `maxTtl`. */
  private stateOf(task: LegacyTask): TaskState {
    const { ttl, pollInterval, ...fields } = task;
    return observedTaskState(
      { ...fields, ttlMs: ttl, pollIntervalMs: pollInterval },
      this.options.config.maxTtlMs,
    );
  }

  /**
   * Sends `method` about `task` (the backend's id) on the task's pinned backend session, replaced
   * once when the backend forgot it (replacePinnedSession.ts).
   */
  private sendOnTask(
    caller: TaskCaller,
    backend: TaskBackend,
    task: StoredTask,
    method: string,
    signal: AbortSignal,
    timeoutMs?: number,
    onServerMessage?: ChannelRequestOptions['onServerMessage'],
  ): Promise<JsonRpcResponse> {
    const params = { taskId: task.backendTaskId };
    // A replacement declares the capabilities of the client asking now (§2.11, §2.12.1).
    const capabilities = caller.capabilities ?? {};
    return sendReplacingForgottenSession(task, {
      send: sessionId =>
        this.requests.send(
          { backend, caller, tool: task.tool },
          sessionId,
          method,
          params,
          signal,
          timeoutMs,
          onServerMessage,
        ),
      newSession: async () => {
        const key = pinnedSessionKey(backend, task.principal, capabilities);
        await this.pinned.forgetSession(key, { id: task.backendSessionId });
        return this.pinned.sessionOf(backend, task.principal, capabilities);
      },
      store: this.options.store,
    });
  }

  /** Audits `caller`'s operation on a 2025-11-25 backend's task. */
  private audit(caller: TaskCaller, operation: Omit<CallerTaskOperation, 'eras'>): Promise<void> {
    const eras = { client: caller.era ?? 'legacy', backend: 'legacy' } as const;
    return auditTaskOperation(this.options.auditor, caller, { ...operation, eras });
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

/**
 * The task's owner as the caller of a request the broker makes for them (a watcher's poll, a
 * final-payload or input read): no client request, so no tool decision to re-check.
 */
function ownerOf(task: StoredTask): TaskCaller {
  return { principal: task.principal, mayUse: () => true };
}

/** What a legacy `tasks/result` answered: the task's final payload, as clients may see it (our id). */
function payloadOf(response: JsonRpcResponse, task: StoredTask): LegacyTaskPayload {
  return 'error' in response
    ? { error: withBrokerTaskId(response.error, task) }
    : { result: response.result };
}

/** Whether an answer is E3 (the backend lost the task; its row is gone). */
function isLost(reply: TaskReply): boolean {
  return (
    'error' in reply && isPlainObject(reply.error.data) && reply.error.data.reason === 'task-lost'
  );
}
