/*
 * The exact errors of task operations (docs/contracts/tasks-and-apps.md §2.13). E1 is the one
 * answer for an unknown id, another person's id, a denied tool and a removed server: its bytes
 * must not tell them apart. Each error names what the client can do.
 */
import { JsonRpcErrorCode, type JsonRpcErrorObject } from '../protocol/jsonRpc';

/** A task error and the HTTP status it goes with (200: in band). */
export interface TaskError {
  readonly error: JsonRpcErrorObject;
  readonly httpStatus: number;
}

const inBand = (error: JsonRpcErrorObject): TaskError => ({ error, httpStatus: 200 });

/** E1: unknown, foreign, denied, removed — all alike. */
export const TASK_NOT_FOUND: TaskError = inBand({
  code: JsonRpcErrorCode.InvalidParams,
  message: 'Failed to retrieve task: Task not found',
  data: { reason: 'task-not-found' },
});

/** E2: the caller's own task, past its expiry and not yet swept. */
export const TASK_EXPIRED: TaskError = inBand({
  code: JsonRpcErrorCode.InvalidParams,
  message: 'Failed to retrieve task: Task has expired',
  data: { reason: 'task-expired' },
});

/** E3: the backend no longer knows a task the broker holds. */
export function taskLost(server: string): TaskError {
  return inBand({
    code: JsonRpcErrorCode.InvalidParams,
    message: `Failed to retrieve task: Task not found (MCP server "${server}" no longer has it)`,
    data: { reason: 'task-lost', server },
  });
}

/** E7: the per-person bound of open tasks (HTTP 429, no Retry-After). */
export function taskLimitReached(limit: number): TaskError {
  return {
    httpStatus: 429,
    error: {
      code: JsonRpcErrorCode.ServerError,
      message: `Open task limit reached: ${limit} open tasks per person (mcpBroker.tasks.perPerson); wait for one to finish or cancel one with tasks/cancel`,
      data: { reason: 'task-limit', limit },
    },
  };
}

/** E9: the row of a new task could not be written (the backend's task was cancelled). */
export function taskNotRecorded(server: string): TaskError {
  return inBand({
    code: JsonRpcErrorCode.InternalError,
    message: `MCP server "${server}" created a task the broker could not record; it was cancelled`,
    data: { reason: 'task-record-failed' },
  });
}

/** E11: a `tasks/list` cursor the broker did not make. */
export const INVALID_TASK_CURSOR: TaskError = inBand({
  code: JsonRpcErrorCode.InvalidParams,
  message: 'Invalid cursor',
  data: { reason: 'invalid-cursor' },
});

/** E8: a legacy `tasks/cancel` of a terminal task of a 2026-07-28 backend. */
export function taskTerminal(status: string): TaskError {
  return inBand({
    code: JsonRpcErrorCode.InvalidParams,
    message: `Cannot cancel task: already in terminal status '${status}'`,
    data: { reason: 'task-terminal' },
  });
}

/** E12: a legacy `tasks/result` of a cancelled task of a 2026-07-28 backend. */
export const TASK_CANCELLED: TaskError = inBand({
  code: JsonRpcErrorCode.InternalError,
  message: 'Task was cancelled',
  data: { status: 'cancelled' },
});
