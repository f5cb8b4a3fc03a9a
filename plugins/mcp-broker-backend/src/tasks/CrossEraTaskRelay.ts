/*
 * Long-running tasks between 2026-07-28 clients and 2025-11-25 backends
 * (docs/contracts/tasks-and-apps.md §2.12.4, with the status mapping of §2.12). Built on the two
 * same-era relays, not beside them: the legacy relay keeps reaching the backend (its pinned
 * sessions, rows, re-authorization, E1–E3, audit); this one decides when a modern call becomes a
 * legacy task and translates what goes back to the modern client.
 *
 * - Create: a `tools/call` of a client that declared the tasks extension, to a backend that
 *   takes task-augmented calls, of a tool whose `execution.taskSupport` is `optional` or
 *   `required`, goes to the legacy relay with `params.task: {}`; its `CreateTaskResult` leaves
 *   as the flat `resultType: "task"` answer with the broker id. At the per-person bound an
 *   `optional` tool runs as a plain call, a `required` one gets E7. A `required` tool called
 *   without the extension is refused before anything is sent (`-32021`, HTTP 400).
 * - `tasks/get`: the legacy `tasks/get`; a terminal task's legacy `tasks/result` (it no longer
 *   blocks) is inlined as `result` (`completed`, also for `isError: true`) or `error` (`failed`).
 * - `tasks/cancel`: the legacy `tasks/cancel` acked; the backend's refusal of a task it still
 *   lists as terminal is acked as the extension says, any other `-32602` is E3.
 * - Input: an `input_required` task's `inputRequests` are what the backend asked on the
 *   `tasks/result` stream the lease holder reads (LegacyInputRelay); until one is recorded the
 *   task shows as `working`. `tasks/update` posts each answer to one of them to the backend;
 *   unknown, foreign or used keys are ignored, and the ack follows the posts.
 * A task id of a modern backend's task goes to the modern relay unchanged.
 *
 * 2025-11-25 clients × 2026-07-28 backends (§2.12.3), on the modern relay the same way:
 * - Create: a `tools/call` with `params.task` to a backend that declared the extension is that
 *   relay's task creation (extension declared on that request, `task` dropped); its
 *   `resultType: "task"` answer leaves as a legacy `CreateTaskResult` (`{ task }`); any other
 *   answer passes (input rounds before the task are asked on the call's stream, spec §9).
 * - `tasks/get`: the modern `tasks/get`, shown as a legacy `Task` (status mapping).
 * - `tasks/result`: emulated by polling the modern `tasks/get` every
 *   `max(pollIntervalMs, minPollInterval)` until the task ends: its `result` (with the
 *   `related-task` meta), its `error`, or E12 for a cancelled task. Each poll is the relay's
 *   `tasks/get`, audited as one `get`. While the task is `input_required` its inputs are asked
 *   on the stream (EmulatedTaskInput).
 * - `tasks/cancel`: the modern `tasks/get` first (an ended task: E8), then `tasks/cancel` and
 *   `tasks/get`, answered with the legacy `Task` as observed.
 * A task id of a legacy backend's task goes to the legacy relay unchanged.
 */
import { backendMalformedResponse, toClientError } from '../backend/backendErrors';
import { sleep } from '../backend/sleep';
import type { TasksConfig } from '../config';
import { isPlainObject, JsonRpcErrorCode, type JsonRpcErrorObject } from '../protocol/jsonRpc';
import { serverInfoMeta } from '../protocol/modernResults';
import { declaresTasksExtension, TASKS_EXTENSION } from '../protocol/modernTasks';
import { missingExtensionError } from '../protocol/requestMetadata';
import { RELATED_TASK_META } from '../protocol/legacyTasks';
import {
  detailedTaskFromLegacyPayload,
  legacyTaskFromModern,
  modernTaskFromLegacy,
  type LegacyTaskSupport,
} from '../protocol/taskEraMapping';
import { withoutRelatedTask } from '../protocol/modernTasks';
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';
import { findOwnTask, type TaskCaller } from './findOwnTask';
import type { LegacyTaskRelay, TaskBackend } from './LegacyTaskRelay';
import type { ModernTaskRelay } from './ModernTaskRelay';
import type { TaskAuditor } from './TaskAuditor';
import { auditTaskOperation } from './auditTaskOperation';
import type { TaskCreation } from '../types';
import { TASK_CANCELLED, taskLimitReached, taskLost, taskTerminal } from './taskErrors';
import { taskRefusal, type TaskReply } from './TaskReply';
import { namesTerminalStatus, type StoredTask, type TaskStore } from './TaskStore';
import { HeldTasks } from './HeldTasks';
import { EmulatedTaskInput, type TaskInputClient, type TaskInputStream } from './EmulatedTaskInput';
import type { ElicitationIdMap } from '../calls/ElicitationIdMap';
import type { LegacyInputRelay } from './LegacyInputRelay';

/** Options of {@link CrossEraTaskRelay}. */
export interface CrossEraTaskRelayOptions {
  store: TaskStore;
  config: TasksConfig;
  legacy: LegacyTaskRelay;
  modern: ModernTaskRelay;
  /** The live 2025-11-25 backend of a server name (the legacy relay's). */
  legacyBackendOf: (server: string) => TaskBackend | undefined;
  /** The input of a legacy backend's tasks (§2.12.4); absent: shown and answered as none. */
  input?: LegacyInputRelay;
  auditor?: TaskAuditor;
  /** The gateway ids of task inputs (§2.12.3) and the time limit of their `tasks/update`. */
  inputs: { elicitations: ElicitationIdMap; requestTimeoutMs: number };
  now?: () => number;
}

/** How a 2026-07-28 `tools/call` to a 2025-11-25 backend goes (see the file comment). */
export type ModernCallToLegacy =
  | { readonly kind: 'task' }
  | { readonly kind: 'plain' }
  | { readonly kind: 'refused'; readonly error: JsonRpcErrorObject; readonly httpStatus: number };

/** `data.reason` of the answers the broker itself gives about a task (not the task's outcome). */
const BROKER_TASK_REASONS = new Set(['task-not-found', 'task-expired', 'task-lost']);

/** The messages of the broker's own failures without `data` (backendErrors.toClientError). */
const BROKER_FAILURE_MESSAGES = new Set(['request aborted', 'internal error in the broker']);

/** See the file comment. */
export class CrossEraTaskRelay {
  private readonly now: () => number;
  private readonly held: HeldTasks;
  /** Input during the emulated `tasks/result`; a session's answer to it (see the file comment). */
  readonly input: EmulatedTaskInput;

  constructor(private readonly options: CrossEraTaskRelayOptions) {
    this.now = options.now ?? Date.now;
    this.input = new EmulatedTaskInput({
      ...options.inputs,
      update: (caller, taskId, inputResponses, signal) =>
        options.modern.update(caller, taskId, inputResponses, signal),
    });
    this.held = new HeldTasks({
      store: options.store,
      config: options.config,
      serverOf: options.legacyBackendOf,
      ...(options.auditor === undefined ? {} : { auditor: options.auditor }),
      ...(options.now === undefined ? {} : { now: options.now }),
    });
  }

  /**
   * How a 2026-07-28 client's `tools/call` of a tool with `taskSupport` to `server` goes: as a
   * legacy task, refused (a `required` tool without the declared extension), or plain.
   */
  modernCallToLegacy(
    server: string,
    clientCapabilities: Readonly<Record<string, unknown>>,
    taskSupport: LegacyTaskSupport,
  ): ModernCallToLegacy {
    if (taskSupport === 'forbidden' || !this.options.legacy.relays(server)) {
      return { kind: 'plain' };
    }
    if (declaresTasksExtension(clientCapabilities)) return { kind: 'task' };
    if (taskSupport === 'optional') return { kind: 'plain' };
    const refusal = missingExtensionError(TASKS_EXTENSION);
    return {
      kind: 'refused',
      httpStatus: refusal.httpStatus,
      error: { code: refusal.code, message: refusal.message, data: refusal.data },
    };
  }

  /**
   * Relays a 2026-07-28 `tools/call` of `tool` (the server's own name, `params` routed) as a
   * legacy task under the broker id `taskId`; the answer in the modern client's shape. Undefined
   * when the person's bound is reached and the tool may run without a task (nothing was sent:
   * the caller runs it as a plain call).
   */
  async create(
    caller: TaskCaller,
    input: {
      server: string;
      tool: string;
      taskSupport: LegacyTaskSupport;
      toolAnnotations?: Record<string, unknown>;
      params: Record<string, unknown>;
      taskId: string;
      signal: AbortSignal;
    },
  ): Promise<TaskReply | undefined> {
    const { taskSupport, ...rest } = input;
    const reply = await this.options.legacy.create(caller, {
      ...rest,
      params: { ...input.params, task: {} },
    });
    if ('error' in reply) {
      return reply.httpStatus === 429 && taskSupport === 'optional' ? undefined : reply;
    }
    const task = reply.result.task;
    if (!isPlainObject(task) || task.taskId !== input.taskId) {
      // The backend answered at once: a plain result.
      return { result: reply.result };
    }
    const { task: _wrapped, ...others } = withoutRelatedTask(reply.result);
    const meta = isPlainObject(others._meta) ? others._meta : {};
    return {
      result: {
        ...others,
        ...modernTaskFromLegacy(task),
        resultType: 'task',
        _meta: { ...serverInfoMeta(), ...meta },
      },
    };
  }

  /** `tasks/get` of a 2026-07-28 client, whichever era the task's backend speaks. */
  async get(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'get');
    if (row?.backendEra !== 'legacy') return this.options.modern.get(caller, taskId, signal);
    const { server } = row;
    const { legacy } = this.options;
    const got = await legacy.get(caller, taskId, signal);
    if ('error' in got) return got;
    const task = modernTaskFromLegacy(got.result);
    if (task.status === 'input_required')
      return { result: await this.withInput(row, task, signal) };
    if (task.status !== 'completed' && task.status !== 'failed') return { result: task };
    // Part of this `get`: one audit event per operation (§2.14).
    const payload = await legacy.result(caller, taskId, signal, { audited: false });
    if ('error' in payload && isBrokerAnswer(payload.error)) return payload;
    const detailed = detailedTaskFromLegacyPayload(task, payload);
    return {
      result: isPlainObject(detailed.result)
        ? { ...detailed, result: resultWithBrokerUiUris(server, detailed.result) }
        : detailed,
    };
  }

  /** `tasks/update` of a 2026-07-28 client (see the file comment for a legacy backend's task). */
  async update(
    caller: TaskCaller,
    taskId: unknown,
    inputResponses: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'update');
    if (row?.backendEra !== 'legacy') {
      return this.options.modern.update(caller, taskId, inputResponses, signal);
    }
    const started = performance.now();
    const { store, legacyBackendOf } = this.options;
    const found = await findOwnTask(store, legacyBackendOf, 'legacy', caller, taskId, this.now());
    const failed =
      'refusal' in found || this.options.input === undefined || !isPlainObject(inputResponses)
        ? undefined
        : await this.options.input.answer(
            found.task,
            found.backend,
            caller.principal,
            inputResponses,
          );
    await auditTaskOperation(this.options.auditor, caller, {
      operation: 'update',
      outcome: 'refusal' in found ? found.outcome : outcomeOf(failed),
      eras: { client: 'modern', backend: 'legacy' },
      started,
      task: found.task,
    });
    if ('refusal' in found) return taskRefusal(found.refusal);
    return failed === undefined ? { result: {} } : { error: failed, httpStatus: 200 };
  }

  /**
   * A legacy task seen `input_required` (`task`, modern-shaped) with its `inputRequests`, or
   * as `working` while none is recorded (§2.12.4).
   */
  private async withInput(
    row: StoredTask,
    task: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    const backend = this.options.legacyBackendOf(row.server);
    const inputRequests =
      backend === undefined || this.options.input === undefined
        ? undefined
        : await this.options.input.inputRequestsOf(row, backend, signal);
    return inputRequests === undefined
      ? { ...task, status: 'working' }
      : { ...task, inputRequests };
  }

  /** `tasks/cancel` of a 2026-07-28 client, whichever era the task's backend speaks. */
  async cancel(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'cancel');
    if (row?.backendEra !== 'legacy') return this.options.modern.cancel(caller, taskId, signal);
    const { server } = row;
    const { legacy } = this.options;
    const cancelled = await legacy.cancel(caller, taskId, signal);
    if (!('error' in cancelled)) return { result: {} };
    if (cancelled.error.code !== JsonRpcErrorCode.InvalidParams) return cancelled;
    if (isBrokerAnswer(cancelled.error)) return cancelled;
    // The backend refused: acked when it still lists the task as ended, else it lost it (E3).
    const seen = await legacy.get(caller, taskId, signal, { audited: false });
    if ('error' in seen) return seen;
    if (namesTerminalStatus(seen.result.status)) return { result: {} };
    await this.options.store.delete(taskId as string).catch(() => undefined);
    return taskRefusal(taskLost(server));
  }

  /**
   * The task creation of a 2025-11-25 client's task-augmented `tools/call` of `tool` on the
   * 2026-07-28 backend `server` (see the file comment).
   */
  legacyCreation(
    caller: TaskCaller,
    input: {
      server: string;
      tool: string;
      toolAnnotations?: Record<string, unknown>;
      /** The client's requested `params.task.ttl` (a held task's lifetime). */
      ttl?: number;
    },
  ): TaskCreation {
    const { ttl, ...created } = input;
    const creation = this.options.modern.creation(caller, created);
    return async (send, requestId) => {
      const response = await creation(send, requestId);
      const result = response.result;
      if (!isPlainObject(result) || result.resultType === 'input_required') return response;
      if (result.resultType !== 'task') {
        // Answered at once: a task the broker makes itself, holding the result (or E10).
        const held = await this.held.hold(caller, {
          ...created,
          ...(ttl === undefined ? {} : { ttl }),
          result,
        });
        return 'error' in held
          ? { jsonrpc: '2.0', id: response.id, error: held.error }
          : { ...response, result: held.result };
      }
      const { _meta, ...task } = legacyTaskFromModern(result);
      return { ...response, result: { task, ...(_meta === undefined ? {} : { _meta }) } };
    };
  }

  /**
   * E7 for a 2025-11-25 client's task-augmented call to a 2026-07-28 backend when the caller's
   * open tasks are at the bound (refused before anything is sent, §2.6); undefined otherwise.
   * A reservation lost to a concurrent one later still never exceeds the bound.
   */
  async legacyCallRefusal(caller: TaskCaller, server: string): Promise<TaskReply | undefined> {
    const { store, config, auditor } = this.options;
    if ((await store.countOpen(caller.principal, this.now())) < config.perPerson) return undefined;
    await auditTaskOperation(auditor, caller, {
      operation: 'create',
      outcome: 'limited',
      eras: { client: 'legacy', backend: 'modern' },
      task: { server },
    });
    return taskRefusal(taskLimitReached(config.perPerson));
  }

  /** `tasks/get` of a 2025-11-25 client, whichever era the task's backend speaks. */
  async legacyGet(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'legacy-get');
    if (row?.backendEra !== 'modern') return this.options.legacy.get(caller, taskId, signal);
    const got = await this.options.modern.get(caller, taskId, signal);
    return 'error' in got ? got : { result: legacyTaskFromModern(got.result) };
  }

  /**
   * `tasks/result` of a 2025-11-25 client, whichever era the task's backend speaks; a modern
   * backend's task is polled until it ends, the task expires or `signal` aborts, its input
   * asked of `client` on the way (none without it).
   */
  async legacyResult(
    caller: TaskCaller,
    taskId: unknown,
    signal: AbortSignal,
    client?: TaskInputClient,
  ): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'legacy-result');
    if (row?.backendEra !== 'modern') return this.options.legacy.result(caller, taskId, signal);
    const input =
      client === undefined ? undefined : this.input.open(caller, row.taskId, row.server, client);
    try {
      return await this.pollModernResult(caller, row, signal, input);
    } finally {
      await input?.close();
    }
  }

  /** The emulated `tasks/result` of the modern backend's task `row` (see legacyResult). */
  private async pollModernResult(
    caller: TaskCaller,
    row: StoredTask,
    signal: AbortSignal,
    input: TaskInputStream | undefined,
  ): Promise<TaskReply> {
    const { modern, config } = this.options;
    const { taskId } = row;
    for (;;) {
      const got = await modern.get(caller, taskId, signal);
      if ('error' in got) return got;
      const seen = got.result;
      const related = { [RELATED_TASK_META]: { taskId } };
      if (seen.status === 'completed' && isPlainObject(seen.result)) {
        const result = withoutRelatedTask(seen.result);
        const meta = isPlainObject(result._meta) ? result._meta : {};
        return { result: { ...result, _meta: { ...meta, ...related } } };
      }
      if (seen.status === 'failed' && isPlainObject(seen.error)) {
        return { error: seen.error as unknown as JsonRpcErrorObject, httpStatus: 200 };
      }
      if (seen.status === 'cancelled') return taskRefusal(TASK_CANCELLED);
      if (seen.status === 'input_required' && input !== undefined) {
        await input.ask(isPlainObject(seen.inputRequests) ? seen.inputRequests : undefined);
      }
      if (seen.status === 'completed' || seen.status === 'failed') {
        // Ended without what its status promises: nothing to wait for, nothing to pass on.
        const missing = seen.status === 'completed' ? 'result' : 'error';
        const failure = backendMalformedResponse(
          row.server,
          `a ${seen.status} task without its ${missing}`,
        );
        return { error: toClientError(failure), httpStatus: 200 };
      }
      const interval =
        typeof seen.pollIntervalMs === 'number' ? seen.pollIntervalMs : config.minPollIntervalMs;
      // An aborted wait ends at once; the next tasks/get then answers the abort.
      await sleep(Math.max(interval, config.minPollIntervalMs), signal);
    }
  }

  /** `tasks/cancel` of a 2025-11-25 client, whichever era the task's backend speaks. */
  async legacyCancel(caller: TaskCaller, taskId: unknown, signal: AbortSignal): Promise<TaskReply> {
    const row = await this.rowOf(taskId);
    if (row?.heldResult !== undefined) return this.held.answer(caller, row, 'legacy-cancel');
    if (row?.backendEra !== 'modern') return this.options.legacy.cancel(caller, taskId, signal);
    const { modern } = this.options;
    const before = await modern.get(caller, taskId, signal);
    if ('error' in before) return before;
    const shown = legacyTaskFromModern(before.result);
    if (namesTerminalStatus(shown.status)) return taskRefusal(taskTerminal(String(shown.status)));
    const cancelled = await modern.cancel(caller, taskId, signal);
    if ('error' in cancelled) return cancelled;
    // The backend cancels eventually: the task as observed, never a `cancelled` not seen.
    return this.legacyGet(caller, taskId, signal);
  }

  /** The row of `taskId` (whoever owns it: the relays check), to pick the relay. */
  private rowOf(taskId: unknown): Promise<StoredTask | undefined> {
    return typeof taskId === 'string' ? this.options.store.get(taskId) : Promise.resolve(undefined);
  }
}

/**
 * Whether an error is the broker's own answer about a task or its backend (E1–E3, a backend
 * failure, an aborted request) rather than the task's outcome from `tasks/result`.
 */
function isBrokerAnswer(error: JsonRpcErrorObject): boolean {
  const data = isPlainObject(error.data) ? error.data : undefined;
  if (typeof data?.reason === 'string' && BROKER_TASK_REASONS.has(data.reason)) return true;
  if (typeof data?.backend === 'string' && typeof data.reason === 'string') return true;
  return (
    error.code === JsonRpcErrorCode.InternalError &&
    data === undefined &&
    BROKER_FAILURE_MESSAGES.has(error.message)
  );
}

/** The audit outcome of an operation that failed with `error`, or succeeded. */
function outcomeOf(error: JsonRpcErrorObject | undefined): 'succeeded' | 'failed' {
  return error === undefined ? 'succeeded' : 'failed';
}
