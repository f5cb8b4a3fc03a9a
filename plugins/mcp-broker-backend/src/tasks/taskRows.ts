/*
 * Rules both TaskStores apply the same way: the order of a person's tasks (newest first), which
 * rows go beyond the retention bound, and the fields an observation writes (the expiry follows
 * the ttl from the moment the slot was reserved, so the broker never forgets a task before the
 * backend does).
 */
import {
  OPEN_TASK_STATUSES,
  type StoredTask,
  type TaskListPosition,
  type TaskState,
} from './TaskStore';

/** Longest `statusMessage` kept (longer ones are cut). */
export const MAX_STATUS_MESSAGE_LENGTH = 1024;

/** Newest first: `recordedAt` descending, then `taskId` descending (negative: `a` comes first). */
export function compareNewestFirst(a: TaskListPosition, b: TaskListPosition): number {
  if (a.recordedAt !== b.recordedAt) return b.recordedAt - a.recordedAt;
  if (a.taskId === b.taskId) return 0;
  return a.taskId < b.taskId ? 1 : -1;
}

/**
 * The ids of a person's `rows` to delete so that at most `retained` stay: the oldest terminal
 * ones (open tasks are never dropped; the per-person bound already limits them).
 */
export function trimRetained(
  rows: ReadonlyArray<Pick<StoredTask, 'taskId' | 'status' | 'recordedAt'>>,
  retained: number,
): string[] {
  const excess = rows.length - retained;
  if (excess <= 0) return [];
  return rows
    .filter(row => !OPEN_TASK_STATUSES.includes(row.status))
    .sort(compareNewestFirst)
    .reverse()
    .slice(0, excess)
    .map(row => row.taskId);
}

/** The row fields `state` sets, its expiry counted from `recordedAt`. */
export function stateFields(recordedAt: number, state: TaskState) {
  return {
    status: state.status,
    statusMessage: state.statusMessage?.slice(0, MAX_STATUS_MESSAGE_LENGTH),
    createdAt: state.createdAt,
    lastUpdatedAt: state.lastUpdatedAt,
    ttlMs: state.ttlMs,
    pollIntervalMs: state.pollIntervalMs,
    expiresAt: recordedAt + state.ttlMs,
  };
}
