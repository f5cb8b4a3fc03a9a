/*
 * Input of a 2025-11-25 backend's task for 2026-07-28 clients (docs/contracts/tasks-and-apps.md
 * §2.12.4 "Input"). A legacy backend asks only on a `tasks/result` stream; a modern client has
 * none, it polls `tasks/get` and answers with `tasks/update`. So the broker reads that stream
 * itself and keeps what the backend asks in the task input store (TaskInputStore:
 * `mcp_broker_elicitations`, shared by the replicas), from where any replica shows it and takes
 * its answers:
 *
 * - When a modern `tasks/get` sees the task `input_required`, the replica holding the task's
 *   lease (taking it when nobody holds it, renewing it every TASK_LEASE_RENEW_MS while it reads)
 *   opens the legacy `tasks/result` on the pinned session and keeps reading it until its final
 *   answer. A replica that finds the lease held by another leaves the reading to it.
 * - Each input request on that stream is recorded under a fresh key (`<server>:<128 random
 *   bits>`, the gateway id: what the client sees in `inputRequests`), with the backend's raw id,
 *   the request as the client is shown it (`mode: "form"` explicit, URL elicitations screened as
 *   any, §11.1, the legacy `related-task` meta removed) and the task's expiry. A request that is
 *   no input request, or a refused URL, is answered towards the backend with an error at once.
 * - `tasks/get` answers list the task's unanswered inputs as `inputRequests`, on any replica;
 *   until one is recorded (waiting at most TASK_INPUT_WAIT_MS), the task shows as `working`,
 *   never as an `input_required` without requests.
 * - `tasks/update`: each key that is one of the task's unanswered inputs is claimed (once, across
 *   replicas, by the task's owner only) and its answer posted to the pinned session as the
 *   JSON-RPC response with the backend's own id and `related-task` meta (the backend's task
 *   id); unknown, foreign or used keys are ignored. A post that fails puts the input back.
 * The broker's drain stops every reading at once (its client polls again elsewhere).
 */
import { randomBytes } from 'node:crypto';
import type { LoggerService } from '@backstage/backend-plugin-api';
import { screenServerRequest, type UrlElicitationPolicy } from '../calls/urlElicitations';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
} from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import { RELATED_TASK_META } from '../protocol/legacyTasks';
import { inputRequestFromServerRequest } from '../protocol/modernResults';
import { withoutRelatedTask } from '../protocol/modernTasks';
import { LATEST_PROTOCOL_VERSION } from '../protocol/versions';
import { backendFailure, toClientError } from '../backend/backendErrors';
import type { LegacyTaskRelay, TaskBackend } from './LegacyTaskRelay';
import type { TaskInput, TaskInputStore } from './TaskInputStore';
import type { StoredTask, TaskStore } from './TaskStore';
import { TASK_LEASE_MS, TASK_LEASE_RENEW_MS } from './TaskWatcher';

/** How long a `tasks/get` waits for the first input of an `input_required` task (ms). */
export const TASK_INPUT_WAIT_MS = 2_000;

/** How often that wait reads the shared store (an input another replica records). */
const TASK_INPUT_READ_MS = 100;

/** Options of {@link LegacyInputRelay}. */
export interface LegacyInputRelayOptions {
  store: TaskStore;
  inputs: TaskInputStore;
  legacy: LegacyTaskRelay;
  /** This replica's id as a lease holder (the watcher's). */
  holder: string;
  /**
   * Whether this replica's watcher holds task `taskId`'s lease (the same holder id): a reading
   * that ends then leaves the lease to it instead of releasing it.
   */
  watching?: (taskId: string) => boolean;
  logger: LoggerService;
  urlElicitations?: UrlElicitationPolicy;
  now?: () => number;
}

/** See the file comment. */
export class LegacyInputRelay {
  /** The tasks whose `tasks/result` this replica reads, and what wakes their waiters. */
  private readonly reading = new Map<string, { recorded: Set<() => void> }>();
  private readonly stopping = new AbortController();
  private readonly now: () => number;

  constructor(private readonly options: LegacyInputRelayOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * The `inputRequests` of task `task`, which a `tasks/get` saw `input_required`: its unanswered
   * inputs by key, once at least one is recorded (the reading started here if nobody reads it);
   * undefined when none is within TASK_INPUT_WAIT_MS (show the task as `working`).
   */
  async inputRequestsOf(
    task: StoredTask,
    backend: TaskBackend,
    signal: AbortSignal,
  ): Promise<Record<string, unknown> | undefined> {
    await this.read(task, backend);
    const deadline = this.now() + TASK_INPUT_WAIT_MS;
    for (;;) {
      const open = await this.options.inputs.openOf(task.taskId, this.now());
      if (open.length > 0) {
        return Object.fromEntries(open.map(input => [input.gatewayId, input.request]));
      }
      const left = deadline - this.now();
      if (left <= 0 || signal.aborted) return undefined;
      await this.recordedOrAfter(task.taskId, Math.min(left, TASK_INPUT_READ_MS));
    }
  }

  /**
   * `tasks/update` of task `task` by `principal`: each of `inputResponses` that answers one of
   * the task's open inputs goes to the backend; the others are ignored. The error of a post that
   * failed (its input is open again), or undefined.
   */
  async answer(
    task: StoredTask,
    backend: TaskBackend,
    principal: string,
    inputResponses: Record<string, unknown>,
  ): Promise<JsonRpcErrorObject | undefined> {
    const { inputs } = this.options;
    for (const [key, answer] of Object.entries(inputResponses)) {
      if (!isPlainObject(answer)) continue;
      const input = await inputs.claim(key, task.taskId, principal, this.now());
      if (input === undefined) continue;
      try {
        await backend.channel.respond(
          { id: input.backendSessionId, protocolVersion: input.protocolVersion },
          input.backendRequestId,
          { result: withBackendTask(answer, task) },
        );
      } catch (error) {
        await inputs.insert(input).catch(() => undefined);
        return toClientError(backendFailure(task.server, error, false));
      }
    }
    return undefined;
  }

  /** The broker is draining: every reading stops now. */
  stop(): void {
    this.stopping.abort();
  }

  /**
   * Starts reading task `task`'s `tasks/result` here unless this replica already does or another
   * holds the task's lease. Resolves once that is decided.
   */
  private async read(task: StoredTask, backend: TaskBackend): Promise<void> {
    const { store, holder } = this.options;
    if (this.reading.has(task.taskId) || this.stopping.signal.aborted) return;
    const now = this.now();
    if (!(await store.takeLease(task.taskId, holder, now, now + TASK_LEASE_MS))) return;
    if (this.reading.has(task.taskId)) return;
    const run = { recorded: new Set<() => void>() };
    this.reading.set(task.taskId, run);
    // Another replica took the lease (this one's renewals failed for longer than a lease): it
    // reads from now on, and this reading stops.
    const leaseLost = new AbortController();
    const renewal = setInterval(() => {
      const at = this.now();
      store
        .takeLease(task.taskId, holder, at, at + TASK_LEASE_MS)
        .then(kept => {
          if (!kept) leaseLost.abort();
        })
        .catch(() => undefined);
    }, TASK_LEASE_RENEW_MS);
    renewal.unref();
    let recording: Promise<void> = Promise.resolve();
    const onServerMessage = (message: JsonRpcMessage, rawId: RawJsonRpcId | undefined) => {
      if (!('method' in message) || !('id' in message) || rawId === undefined) return;
      recording = recording
        .then(() =>
          this.record(task, backend, message as unknown as Record<string, unknown>, rawId),
        )
        .then(() => run.recorded.forEach(wake => wake()))
        .catch(error =>
          this.options.logger.warn(`Could not record an input of an MCP task: ${error}`),
        );
    };
    void this.options.legacy
      .readResult(
        task,
        backend,
        onServerMessage,
        AbortSignal.any([this.stopping.signal, leaseLost.signal]),
      )
      .catch(error => {
        if (!this.stopping.signal.aborted) {
          this.options.logger.info(
            `Stopped reading the input of a task of MCP server "${task.server}": ${error}`,
          );
        }
      })
      .finally(async () => {
        clearInterval(renewal);
        await recording;
        this.reading.delete(task.taskId);
        if (!leaseLost.signal.aborted && !this.options.watching?.(task.taskId)) {
          await store.releaseLease(task.taskId, holder).catch(() => undefined);
        }
      });
  }

  /** Records one request the backend sent on the stream, or refuses it towards the backend. */
  private async record(
    task: StoredTask,
    backend: TaskBackend,
    message: Record<string, unknown>,
    rawId: RawJsonRpcId,
  ): Promise<void> {
    const method = String(message.method).slice(0, 100);
    const params = isPlainObject(message.params) ? withoutLegacyMeta(message.params) : undefined;
    const session = { id: task.backendSessionId, protocolVersion: LATEST_PROTOCOL_VERSION };
    const refuse = (error: JsonRpcErrorObject) =>
      backend.channel.respond(session, rawId, { error }).catch(() => undefined);
    const request = inputRequestFromServerRequest(method, params);
    if (request === undefined) {
      await refuse({
        code: JsonRpcErrorCode.MethodNotFound,
        message: `${method} is not a request the broker relays during a task`,
      });
      return;
    }
    const screened = screenServerRequest(
      task.server,
      method,
      request.params,
      this.options.urlElicitations,
    );
    if ('refusal' in screened) {
      await refuse(screened.refusal);
      return;
    }
    const input: TaskInput = {
      gatewayId: `${task.server}:${randomBytes(16).toString('base64url')}`,
      taskId: task.taskId,
      principal: task.principal,
      server: task.server,
      backendSessionId: task.backendSessionId,
      protocolVersion: session.protocolVersion,
      backendRequestId: rawId,
      request: {
        ...request,
        ...(screened.params === undefined ? {} : { params: screened.params }),
      },
      expiresAt: task.expiresAt,
    };
    await this.options.inputs.insert(input);
  }

  /** Resolves when this replica records an input of `taskId`, or after `ms`. */
  private recordedOrAfter(taskId: string, ms: number): Promise<void> {
    const run = this.reading.get(taskId);
    return new Promise(resolve => {
      const wait: { timer?: NodeJS.Timeout } = {};
      const done = () => {
        clearTimeout(wait.timer);
        run?.recorded.delete(done);
        resolve();
      };
      wait.timer = setTimeout(done, ms);
      run?.recorded.add(done);
    });
  }
}

/** A client's answer as the backend's response: `related-task` naming the backend's task id. */
function withBackendTask(
  answer: Record<string, unknown>,
  task: StoredTask,
): Record<string, unknown> {
  const meta = isPlainObject(answer._meta) ? answer._meta : {};
  return { ...answer, _meta: { ...meta, [RELATED_TASK_META]: { taskId: task.backendTaskId } } };
}

/** Request params without the legacy `related-task` meta (and without `_meta` left empty). */
function withoutLegacyMeta(params: Record<string, unknown>): Record<string, unknown> {
  const { _meta: meta, ...rest } = withoutRelatedTask(params);
  return isPlainObject(meta) && Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest;
}
