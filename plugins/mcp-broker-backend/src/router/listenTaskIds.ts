/*
 * The task filter of a 2026-07-28 `subscriptions/listen` (contract §2.10 "Listen filter"):
 * `params.notifications.taskIds` is the client's only with the tasks extension declared (E4),
 * holds at most 4 × `mcpBroker.tasks.perPerson` ids, and the acknowledgement agrees to those ids
 * that pass §2.7 steps 3–6 for the caller (own, unexpired, permitted); the others are left out
 * silently, so a listen tells nothing of tasks that are not the caller's. Each id checked is one
 * `mcp-broker.task` audit event, operation `listen` (§2.14), with the outcome of its check.
 */
import type { McpBroker } from '../broker/McpBroker';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { declaresTasksExtension, TASKS_EXTENSION } from '../protocol/modernTasks';
import { missingExtensionError, type ModernRequestError } from '../protocol/requestMetadata';
import { findOwnTask, type TaskCaller } from '../tasks/findOwnTask';

/** How many task ids one listen may name, per task a person may have open. */
export const LISTEN_TASK_IDS_PER_OPEN_TASK = 4;

/**
 * The ids of `taskIds` the stream is agreed to (in the client's order, once each), or the
 * error that refuses the listen before anything is opened.
 */
export async function agreedTaskIds(
  broker: Pick<McpBroker, 'taskStore' | 'server' | 'config' | 'auditTaskOperation'>,
  caller: TaskCaller,
  clientCapabilities: Readonly<Record<string, unknown>> | undefined,
  taskIds: readonly string[],
): Promise<{ agreed: string[] } | { refusal: ModernRequestError }> {
  if (!declaresTasksExtension(clientCapabilities ?? {})) {
    return { refusal: missingExtensionError(TASKS_EXTENSION) };
  }
  const perPerson = broker.config.tasks.perPerson;
  const most = LISTEN_TASK_IDS_PER_OPEN_TASK * perPerson;
  if (taskIds.length > most) {
    return {
      refusal: {
        httpStatus: 400,
        code: JsonRpcErrorCode.InvalidParams,
        message:
          `params.notifications.taskIds names ${taskIds.length} tasks; at most ${most} ` +
          `(${LISTEN_TASK_IDS_PER_OPEN_TASK} × mcpBroker.tasks.perPerson) may be named in one ` +
          'subscriptions/listen: name the tasks you wait for',
      },
    };
  }
  const backendOf = (name: string) => {
    const server = broker.server(name);
    return server && { server };
  };
  const now = Date.now();
  const agreed: string[] = [];
  for (const taskId of new Set(taskIds)) {
    const started = performance.now();
    const found = await findOwnTask(broker.taskStore, backendOf, undefined, caller, taskId, now);
    const { task } = found;
    if (!('refusal' in found)) agreed.push(taskId);
    await broker.auditTaskOperation({
      principal: caller.principal,
      operation: 'listen',
      outcome: 'refusal' in found ? found.outcome : 'succeeded',
      durationMs: performance.now() - started,
      clientEra: 'modern',
      ...(task === undefined
        ? {}
        : {
            server: task.server,
            tool: task.tool,
            taskId: task.taskId,
            backendEra: task.backendEra,
          }),
      ...(caller.traceId === undefined ? {} : { traceId: caller.traceId }),
    });
  }
  return { agreed };
}
