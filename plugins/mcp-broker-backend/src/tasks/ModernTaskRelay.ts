/*
 * Long-running tasks between 2026-07-28 clients and 2026-07-28 backends: the tasks extension
 * `io.modelcontextprotocol/tasks` (SEP-2663) end to end (docs/contracts/tasks-and-apps.md §2.5–
 * §2.8, §2.11, §2.12.2, §2.13). Knows no HTTP: the call machinery hands it a call's backend
 * request ({@link ModernTaskRelay.creation}), the router a task operation.
 *
 * - Create: a `tools/call` of a client that declared the extension, to a backend that declared
 *   it, reserves a slot under the person's bound and declares the extension to the backend on
 *   that one request; at the bound it goes on without the declaration (so it can still run at
 *   once), and a backend that then insists on a task (`-32021` naming the extension) gets the
 *   client E7. A `resultType: "task"` answer leaves with the broker id only once the row is
 *   written (E9 and a best-effort `tasks/cancel` when it cannot be); any other answer releases
 *   the slot and passes (an `input_required` round keeps its sealed `requestState`: the call
 *   machinery's, spec §9).
 * - Modern backends have no session: any replica sends `tasks/get`, `tasks/update` and
 *   `tasks/cancel` stateless, with the broker's credential, the backend's id in the params and
 *   in `Mcp-Name` (the transport mirrors it), and the extension declared.
 * - Every operation finds the caller's row first (findOwnTask: E1, E2), then asks the backend.
 *   Answers come back with the broker id, `related-task` meta removed, UI URIs of an inlined
 *   result in the broker's form, and URL elicitations among `inputRequests` screened as every
 *   elicitation is (spec §11.1); `tasks/update` keys pass verbatim (a modern backend's keys are
 *   scoped to its task). A `tasks/get` answer is an observation of the row (compare-and-set);
 *   so is the `tasks/get` after a cancel, so a cancelled task stops counting as open. A backend
 *   that no longer knows the task: E3, the row is deleted.
 * Every operation is one `mcp-broker.task` audit event (TaskAuditor).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerServerConfig, TasksConfig } from '../config';
import type { ModernChannel } from '../backend/ModernChannel';
import {
  backendMalformedResponse,
  backendReturnedTask,
  toClientError,
} from '../backend/backendErrors';
import { screenInputRequests, type UrlElicitationPolicy } from '../calls/urlElicitations';
import { serverIdentityOf } from '../identity/serverIdentity';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcResponse,
} from '../protocol/jsonRpc';
import { serverInfoMeta } from '../protocol/modernResults';
import {
  declaresTasksExtension,
  inputRequestsWithoutRelatedTask,
  modernTaskOf,
  requiresTasksExtension,
  taskAckOf,
  withoutRelatedTask,
  withTasksExtension,
  type ModernTask,
} from '../protocol/modernTasks';
import { STORE_UNAVAILABLE_ERROR } from '../protocol/storeUnavailable';
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';
import type { TaskCreation } from '../types';
import { newBrokerTaskId } from './brokerTaskId';
import { finalPayloadOfDetailedTask } from './finalPayload';
import { backendOfTask, findOwnTask, type TaskCaller } from './findOwnTask';
import { observedTaskState } from './observedTaskState';
import { plainCallAsTask } from './plainCallAsTask';
import { observeTaskState, type ObservedChange } from './observeTaskState';
import type { TaskAuditor, TaskOperation } from './TaskAuditor';
import { auditTaskOperation, type CallerTaskOperation } from './auditTaskOperation';
import { backendTaskError, saysNotFound, withBrokerTaskId } from './backendTaskError';
import { reserveTaskSlot } from './reserveTaskSlot';
import { taskOfRow } from './taskOfRow';
import { taskLimitReached, taskNotRecorded } from './taskErrors';
import { taskRefusal, type TaskReply } from './TaskReply';
import type { StoredTask, TaskStore } from './TaskStore';

/** A 2026-07-28 backend as the relay reaches it. */
export interface ModernTaskBackend {
  readonly server: BrokerServerConfig;
  readonly channel: ModernChannel;
  /** Its `server/discover` declared the tasks extension. */
  readonly supportsTasks: boolean;
}

/** Options of {@link ModernTaskRelay}. */
export interface ModernTaskRelayOptions {
  store: TaskStore;
  config: TasksConfig;
  /** A `tools/call` that creates a task answers within this (then the slot lapses). */
  toolCallTimeoutMs: number;
  /** The live 2026-07-28 backend of a server name (servers come and go at runtime). */
  backendOf: (server: string) => ModernTaskBackend | undefined;
  auditor?: TaskAuditor;
  /**
   * A change of a task's state this replica wrote (the compare-and-set winner), its creation
   * included: the broker audits a task's end once and publishes every change.
   */
  onObserved?: (change: ObservedChange) => Promise<void>;
  /** Where a store failure is told (never to the client). */
  logger?: Pick<LoggerService, 'warn'>;
  /** What a backend's URL elicitation may point at (urlElicitations.ts); absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
  now?: () => number;
}

/** The client capabilities every task request to a backend declares: the extension only. */
const TASK_REQUEST_CAPABILITIES = withTasksExtension({});

/** See the file comment. */
export class ModernTaskRelay {
  private nextRequestId = 1;
  private readonly now: () => number;

  constructor(private readonly options: ModernTaskRelayOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * True when a `tools/call` to `server` from a client with `clientCapabilities` may create a
   * task: tasks are on, the client declared the extension, and so did the backend.
   */
  relays(server: string, clientCapabilities: Readonly<Record<string, unknown>>): boolean {
    return (
      this.options.config.enabled &&
      declaresTasksExtension(clientCapabilities) &&
      this.options.backendOf(server)?.supportsTasks === true
    );
  }

  /**
   * The task creation of a `tools/call` of `tool` (the server's own name) on `server` by
   * `caller` (see the file comment; the call machinery runs it around the backend request).
   */
  creation(
    caller: TaskCaller,
    input: { server: string; tool: string; toolAnnotations?: Record<string, unknown> },
  ): TaskCreation {
    return async (send, requestId) => {
      const started = performance.now();
      const backend = this.options.backendOf(input.server);
      if (backend === undefined) return send(false);
      const { store, config } = this.options;
      const taskId = newBrokerTaskId(input.server);
      const now = this.now();
      let reserved: boolean;
      try {
        reserved = await reserveTaskSlot(
          store,
          config,
          {
            taskId,
            principal: caller.principal,
            server: input.server,
            serverIdentity: serverIdentityOf(backend.server),
            tool: input.tool,
            toolAnnotations: input.toolAnnotations,
            backendEra: 'modern',
          },
          now,
          this.options.toolCallTimeoutMs,
        );
      } catch (error) {
        // The task table is out of reach: nothing is sent, the client may retry (503).
        this.options.logger?.warn(`MCP broker: the task table is unavailable: ${error}`);
        return { jsonrpc: '2.0', id: requestId, error: STORE_UNAVAILABLE_ERROR };
      }
      if (!reserved) {
        // At the bound the call goes on without a task; one that cannot run without: E7.
        const response = await send(false);
        if (isPlainObject(response.result) && response.result.resultType === 'task') {
          // A task nobody can reach (no row, and the client never sees its id): cancelled.
          await this.cancelUnrecorded(backend, modernTaskOf(response.result)?.taskId);
          throw backendReturnedTask(input.server);
        }
        if (!isPlainObject(response.error) || !requiresTasksExtension(errorOf(response))) {
          return response;
        }
        const task = { server: input.server, tool: input.tool, taskId };
        await this.audit(caller, { operation: 'create', outcome: 'limited', started, task });
        return errorResponse(response, taskLimitReached(config.perPerson).error);
      }
      let response: Record<string, unknown>;
      try {
        response = await send(true);
      } catch (error) {
        await store.release(taskId).catch(() => undefined);
        throw error;
      }
      const answer = isPlainObject(response.result) ? response.result : undefined;
      const task = answer?.resultType === 'task' ? modernTaskOf(answer) : undefined;
      if (answer === undefined || task === undefined) {
        // Answered without a task (an error, at once, or an input round): the slot goes (or
        // lapses with the sweep when the table is unreachable now).
        await store.release(taskId).catch(() => undefined);
        if (answer?.resultType === 'task') {
          // Its id cannot be read: nothing of it may reach the client.
          throw backendMalformedResponse(input.server, 'a task result without a valid task');
        }
        return response;
      }
      let recorded: StoredTask | undefined;
      try {
        recorded = await store.activate(
          taskId,
          { backendTaskId: task.taskId },
          observedTaskState(task, config.maxTtlMs),
        );
      } catch {
        recorded = undefined;
      }
      if (recorded === undefined) {
        // The client must never get an id the broker cannot find; the slot goes at once.
        await store.release(taskId).catch(() => undefined);
        await this.cancelUnrecorded(backend, task.taskId);
        return errorResponse(response, taskNotRecorded(input.server).error);
      }
      // The creation is the task's first observation: published (and a task born ended is
      // counted and audited as ended) like every later change.
      await this.options.onObserved?.({
        before: { ...recorded, status: 'pending', version: recorded.version - 1 },
        after: recorded,
      });
      return {
        ...response,
        result: { ...this.shown(recorded, answer, task), resultType: 'task' },
      };
    };
  }

  /**
   * The task creation of a 2025-11-25 client's plain `tools/call` to `server`: the `-32021`
   * fallback of contract §2.12.3 (plainCallAsTask.ts); undefined when the backend is gone.
   */
  plainCallCreation(server: string): TaskCreation | undefined {
    const backend = this.options.backendOf(server);
    if (backend === undefined) return undefined;
    return plainCallAsTask({
      server,
      minPollIntervalMs: this.options.config.minPollIntervalMs,
      request: (method, backendTaskId, params, signal) =>
        this.send(backend, method, backendTaskId, params, signal),
      ...(this.options.urlElicitations === undefined
        ? {}
        : { urlElicitations: this.options.urlElicitations }),
    });
  }

  /** `tasks/get`: the `DetailedTask` as the backend shows it now. */
  get(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'get', async (task, backend) => {
      const response = await this.send(backend, 'tasks/get', task.backendTaskId!, {}, signal);
      if ('error' in response) return this.backendError(task, response.error);
      const seen = modernTaskOf(response.result);
      if (seen === undefined) {
        // `operate` answers it as every backend failure (toClientError).
        throw backendMalformedResponse(task.server, 'a tasks/get answer that is not a task');
      }
      const observed = await this.observe(task, seen, response.result);
      const screened = screenInputRequests(
        task.server,
        isPlainObject(response.result.inputRequests) ? response.result.inputRequests : undefined,
        this.options.urlElicitations,
      );
      if ('refusal' in screened) {
        return {
          error: {
            code: JsonRpcErrorCode.InternalError,
            message: `MCP server "${task.server}" asked for input the broker does not relay. ${screened.refusal.message}`,
            data: { backend: task.server },
          },
          httpStatus: 200,
        };
      }
      const inlined = response.result.result;
      return {
        result: {
          ...this.shown(observed, response.result, seen),
          ...(screened.inputRequests === undefined
            ? {}
            : { inputRequests: inputRequestsWithoutRelatedTask(screened.inputRequests) }),
          ...(isPlainObject(inlined)
            ? { result: resultWithBrokerUiUris(task.server, withoutRelatedTask(inlined)) }
            : {}),
        },
      };
    });
  }

  /** `tasks/update`: the client's input answers, keys verbatim; the backend's ack. */
  update(
    caller: TaskCaller,
    taskId: unknown,
    inputResponses: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<TaskReply> {
    return this.operate(caller, taskId, 'update', async (task, backend) => {
      const response = await this.send(
        backend,
        'tasks/update',
        task.backendTaskId!,
        { inputResponses },
        signal,
      );
      if ('error' in response) {
        // An update's "not found" may name an input key: the task is lost only if a read of it
        // says so too (otherwise the backend's answer passes, and the task stays).
        const refused = { error: withBrokerTaskId(response.error, task), httpStatus: 200 };
        if (!saysNotFound(response.error)) return refused;
        const read = await this.send(backend, 'tasks/get', task.backendTaskId!, {}, signal);
        return 'error' in read ? this.backendError(task, read.error) : refused;
      }
      return { result: taskAckOf(response.result) };
    });
  }

  /** Best effort: cancels a backend task the broker holds no row of (nobody could reach it). */
  private async cancelUnrecorded(
    backend: ModernTaskBackend,
    backendTaskId: string | undefined,
  ): Promise<void> {
    if (backendTaskId === undefined) return;
    await this.send(backend, 'tasks/cancel', backendTaskId, {}, new AbortController().signal)
      .then(() => undefined)
      .catch(() => undefined);
  }

  /** `tasks/cancel`: the backend's ack (cancellation is cooperative: eventual). */
  cancel(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    return this.operate(caller, taskId, 'cancel', async (task, backend) => {
      const response = await this.send(backend, 'tasks/cancel', task.backendTaskId!, {}, signal);
      if ('error' in response) return this.backendError(task, response.error);
      // The task may have ended: its row must stop counting as open (no watcher reads it yet).
      await this.refresh(task, backend, signal);
      return { result: taskAckOf(response.result) };
    });
  }

  /**
   * The watcher's poll of a 2026-07-28 backend's task (contract §2.10): one stateless
   * `tasks/get` with the broker's credential, observed into the row (a change is written and
   * published by `onObserved`). The row afterwards; undefined when the task is not this relay's,
   * expired, its server is gone or replaced, or the backend no longer has it (the row is
   * deleted, as E3 does). Throws when the backend failed (the watcher polls again later).
   */
  async poll(taskId: string, signal: AbortSignal): Promise<StoredTask | undefined> {
    const { store } = this.options;
    const task = await store.get(taskId);
    if (
      task === undefined ||
      task.backendEra !== 'modern' ||
      task.backendTaskId === undefined ||
      task.expiresAt <= this.now()
    ) {
      return undefined;
    }
    const backend = backendOfTask(this.options.backendOf, task);
    if (backend === undefined) return undefined;
    const response = await this.send(backend, 'tasks/get', task.backendTaskId, {}, signal);
    if ('error' in response) {
      if (!saysNotFound(response.error)) {
        throw new Error(
          `MCP server "${task.server}" answered tasks/get: ${response.error.message}`,
        );
      }
      await store.delete(task.taskId);
      return undefined;
    }
    const seen = modernTaskOf(response.result);
    if (seen === undefined) {
      throw new Error(`MCP server "${task.server}" answered tasks/get with something not a task`);
    }
    await this.observe(task, seen, response.result);
    return store.get(taskId);
  }

  /** Steps 3–7 of contract §2.7 around one backend operation, audited. */
  private async operate(
    caller: TaskCaller,
    taskId: unknown,
    operation: TaskOperation,
    run: (task: StoredTask, backend: ModernTaskBackend) => Promise<TaskReply>,
  ): Promise<TaskReply> {
    const started = performance.now();
    const { store, backendOf } = this.options;
    const found = await findOwnTask(store, backendOf, 'modern', caller, taskId, this.now());
    if ('refusal' in found) {
      await this.audit(caller, { operation, outcome: found.outcome, started, task: found.task });
      return taskRefusal(found.refusal);
    }
    const { task, backend } = found;
    let reply: TaskReply;
    try {
      reply = await run(task, backend);
    } catch (error) {
      reply = { error: toClientError(error), httpStatus: 200 };
    }
    const outcome = 'error' in reply ? 'failed' : 'succeeded';
    await this.audit(caller, { operation, outcome, started, task });
    return reply;
  }

  /**
   * Writes what `seen` shows of the task into its row (compare-and-set); the row as observed.
   * `answer` is the `tasks/get` result `seen` was read from: an ended task's payload is
   * published with the change.
   */
  private async observe(
    task: StoredTask,
    seen: ModernTask,
    answer: Record<string, unknown>,
  ): Promise<StoredTask> {
    const state = observedTaskState(seen, this.options.config.maxTtlMs);
    // Written only when it is news, retried once after a lost compare-and-set (a cancel's
    // follow-up read must not leave the row open); the writer tells the broker.
    const change = await observeTaskState(this.options.store, task, state).catch(() => undefined);
    if (change !== undefined) {
      const payload = finalPayloadOfDetailedTask(answer);
      // Published to clients: the backend's id never in it (§2.3).
      const finalPayload =
        payload !== undefined && 'error' in payload
          ? { error: withBrokerTaskId(payload.error, task) }
          : payload;
      await this.options.onObserved?.(
        finalPayload === undefined ? change : { ...change, finalPayload },
      );
    }
    return { ...task, ...state };
  }

  /** Reads the task's state from the backend into its row (best effort). */
  private async refresh(task: StoredTask, backend: ModernTaskBackend, signal: AbortSignal) {
    try {
      const response = await this.send(backend, 'tasks/get', task.backendTaskId!, {}, signal);
      const seen = 'result' in response ? modernTaskOf(response.result) : undefined;
      if (seen !== undefined && 'result' in response) {
        await this.observe(task, seen, response.result);
      }
    } catch {
      // The next operation sees it again.
    }
  }

  /** A backend error on a task: "not found" means it lost the task (E3, row deleted). */
  private backendError(task: StoredTask, error: JsonRpcErrorObject): Promise<TaskReply> {
    return backendTaskError(this.options.store, task, error);
  }

  /**
   * A 2026-07-28 `Task` for a client: the backend's other members (`_meta` without
   * `related-task`), the broker id and the row's state (`seen` adds what the row lacks).
   */
  private shown(
    task: StoredTask,
    answer: Record<string, unknown>,
    seen: ModernTask,
  ): Record<string, unknown> {
    const {
      inputRequests: _screenedApart,
      result: _rewrittenApart,
      ttl: _legacyTtl,
      pollInterval: _legacyPollInterval,
      ...rest
    } = withoutRelatedTask(answer);
    const meta = isPlainObject(rest._meta) ? rest._meta : {};
    return { ...rest, ...taskOfRow(task, 'modern', seen), _meta: { ...serverInfoMeta(), ...meta } };
  }

  /** Sends `method` about the backend's task `backendTaskId` (stateless; any replica). */
  private send(
    backend: ModernTaskBackend,
    method: 'tasks/get' | 'tasks/update' | 'tasks/cancel',
    backendTaskId: string,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<JsonRpcResponse> {
    return backend.channel.request(
      {
        jsonrpc: '2.0',
        id: `task-${this.nextRequestId++}`,
        method,
        params: { ...params, taskId: backendTaskId },
      },
      TASK_REQUEST_CAPABILITIES,
      { signals: [signal] },
    );
  }

  /** Audits `caller`'s operation on a 2026-07-28 backend's task. */
  private audit(caller: TaskCaller, operation: Omit<CallerTaskOperation, 'eras'>): Promise<void> {
    const eras = { client: caller.era ?? 'modern', backend: 'modern' } as const;
    return auditTaskOperation(this.options.auditor, caller, { ...operation, eras });
  }
}

/** The error `error` in place of what `response` (to the same request) carried. */
function errorResponse(
  response: Record<string, unknown>,
  error: JsonRpcErrorObject,
): Record<string, unknown> {
  return { jsonrpc: '2.0', id: response.id, error };
}

/** A response's error object (the caller checked that it has one). */
function errorOf(response: Record<string, unknown>): JsonRpcErrorObject {
  return response.error as JsonRpcErrorObject;
}
