/*
 * Tasks the broker makes itself (docs/contracts/tasks-and-apps.md §2.12.3): a 2026-07-28 backend
 * answered a 2025-11-25 client's task-augmented call at once, and a 2025-11-25 receiver that
 * accepts such a call must answer with a task. The result is held in the row (`held_result`, at
 * most `maxStoredResultBytes`, else E10) with status `completed` (`failed` for `isError: true`)
 * and the requested `ttl` capped by `maxTtl`; every later operation, in either era, is answered
 * from the row with no backend request, after the same checks as any task (findOwnTask).
 */
import type { BrokerServerConfig, TasksConfig } from '../config';
import { isPlainObject, JsonRpcErrorCode } from '../protocol/jsonRpc';
import { RELATED_TASK_META } from '../protocol/legacyTasks';
import { serverIdentityOf } from '../identity/serverIdentity';
import { newBrokerTaskId } from './brokerTaskId';
import { findOwnTask, type TaskCaller } from './findOwnTask';
import type { TaskAuditor, TaskOperation, TaskOutcome } from './TaskAuditor';
import { auditTaskOperation } from './auditTaskOperation';
import { type TaskError, taskLimitReached, taskNotRecorded, taskTerminal } from './taskErrors';
import { taskRefusal, type TaskReply } from './TaskReply';
import type { StoredTask, TaskStore } from './TaskStore';
import { reserveTaskSlot } from './reserveTaskSlot';
import { taskOfRow } from './taskOfRow';
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';

/** Options of {@link HeldTasks}. */
export interface HeldTasksOptions {
  store: TaskStore;
  config: TasksConfig;
  /** The configured server of a name (its identity binds the row). */
  serverOf: (server: string) => { readonly server: BrokerServerConfig } | undefined;
  auditor?: TaskAuditor;
  now?: () => number;
}

/** What a client asks of a held task. */
export type HeldOperation =
  'legacy-get' | 'legacy-result' | 'legacy-cancel' | 'get' | 'update' | 'cancel';

/** E10: a result too large to hold. */
function resultTooLarge(server: string, bytes: number): TaskError {
  return {
    httpStatus: 200,
    error: {
      code: JsonRpcErrorCode.InternalError,
      message: `MCP server "${server}" answered at once with ${bytes} bytes, more than a task can hold (mcpBroker.tasks.maxStoredResultBytes); call the tool without a task`,
      data: { reason: 'task-result-too-large' },
    },
  };
}

/** See the file comment. */
export class HeldTasks {
  private readonly now: () => number;

  constructor(private readonly options: HeldTasksOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Holds `result`, the immediate answer of `tool` on `server` to `caller`'s task-augmented call
   * (`ttl`: the client's requested one), and answers the legacy `CreateTaskResult`.
   */
  async hold(
    caller: TaskCaller,
    input: {
      server: string;
      tool: string;
      toolAnnotations?: Record<string, unknown>;
      ttl?: number;
      result: Record<string, unknown>;
    },
  ): Promise<TaskReply> {
    const { store, config } = this.options;
    const { resultType: _complete, ...result } = input.result;
    const held = JSON.stringify(result);
    const bytes = Buffer.byteLength(held);
    if (bytes > config.maxStoredResultBytes)
      return taskRefusal(resultTooLarge(input.server, bytes));
    const backend = this.options.serverOf(input.server);
    if (backend === undefined) return taskRefusal(taskNotRecorded(input.server));
    const taskId = newBrokerTaskId(input.server);
    const now = this.now();
    // Nothing is asked of the backend: the slot is activated at once.
    const reserved = await reserveTaskSlot(
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
      0,
    );
    if (!reserved) return taskRefusal(taskLimitReached(config.perPerson));
    const at = new Date(now).toISOString();
    const recorded = await store
      .activate(
        taskId,
        { heldResult: held },
        {
          status: result.isError === true ? 'failed' : 'completed',
          createdAt: at,
          lastUpdatedAt: at,
          ttlMs: Math.floor(Math.min(input.ttl ?? config.maxTtlMs, config.maxTtlMs)),
        },
      )
      .catch(() => undefined);
    if (recorded === undefined) {
      // The slot goes at once (it would count against the person's bound until swept).
      await store.release(taskId).catch(() => undefined);
      return taskRefusal(taskNotRecorded(input.server));
    }
    await this.audit(caller, 'create', 'succeeded', recorded);
    return { result: { task: taskOfRow(recorded, 'legacy') } };
  }

  /** `operation` on the held task `row` (the caller's or not: checked here). */
  async answer(caller: TaskCaller, row: StoredTask, operation: HeldOperation): Promise<TaskReply> {
    const found = await findOwnTask(
      this.options.store,
      this.options.serverOf,
      row.backendEra,
      caller,
      row.taskId,
      this.now(),
    );
    const audited = operation.replace('legacy-', '') as TaskOperation;
    if ('refusal' in found) {
      await this.audit(caller, audited, found.outcome, found.task);
      return taskRefusal(found.refusal);
    }
    const { task } = found;
    await this.audit(caller, audited, 'succeeded', task);
    // Held as the backend answered: its `ui://` URIs in the broker's form, as every result.
    const result = resultWithBrokerUiUris(
      task.server,
      JSON.parse(task.heldResult!) as Record<string, unknown>,
    );
    switch (operation) {
      case 'legacy-get':
        return { result: taskOfRow(task, 'legacy') };
      case 'legacy-result': {
        const meta = isPlainObject(result._meta) ? result._meta : {};
        return {
          result: { ...result, _meta: { ...meta, [RELATED_TASK_META]: { taskId: task.taskId } } },
        };
      }
      case 'legacy-cancel':
        return taskRefusal(taskTerminal(task.status));
      case 'get': {
        // The status mapping: a held tool error is a completed task with its isError result.
        return { result: { ...taskOfRow(task, 'modern'), status: 'completed', result } };
      }
      default:
        return { result: {} };
    }
  }

  /** Audits `caller`'s operation on a held task (answered from the row at once: 0 ms). */
  private audit(
    caller: TaskCaller,
    operation: TaskOperation,
    outcome: TaskOutcome,
    task?: StoredTask,
  ): Promise<void> {
    const eras = { client: caller.era ?? 'legacy', backend: 'modern' } as const;
    return auditTaskOperation(this.options.auditor, caller, { operation, outcome, eras, task });
  }
}
