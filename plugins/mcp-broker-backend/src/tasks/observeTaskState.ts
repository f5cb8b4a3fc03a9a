/*
 * One observation of a task (docs/contracts/tasks-and-apps.md §2.10 "Observations"): a backend
 * answer showing the task's state — a watcher's poll, a client's `tasks/get` or `tasks/cancel`
 * relayed by any replica — compared with the row. Only a change is written, with the store's
 * compare-and-set on `version`, so of replicas that saw the same change exactly one writes it
 * (and that one publishes it). An observation older than the row (its `lastUpdatedAt` is
 * earlier) or one that would reopen an ended task changes nothing. A writer that lost the race
 * reads the row again and writes once more if its observation still says something new.
 */
import type { LegacyTaskPayload } from '../protocol/taskEraMapping';
import { isTerminalStatus, type StoredTask, type TaskState, type TaskStore } from './TaskStore';
import { stateFields } from './taskRows';

/**
 * A change this replica wrote: the row before and after it, and, when the change ended the task
 * (`completed`, `failed`), its final payload if the observation read it (finalPayload.ts).
 */
export interface ObservedChange {
  readonly before: StoredTask;
  readonly after: StoredTask;
  readonly finalPayload?: LegacyTaskPayload;
}

/**
 * Writes `state` over `task`'s row when it is a change (see the file comment); the change when
 * this call wrote it, undefined when there was nothing to write or another replica wrote first.
 */
export async function observeTaskState(
  store: TaskStore,
  task: StoredTask,
  state: TaskState,
): Promise<ObservedChange | undefined> {
  let row: StoredTask | undefined = task;
  for (let attempt = 0; attempt < 2 && row !== undefined; attempt += 1) {
    if (!isNews(row, state)) return undefined;
    if (await store.observe(row.taskId, row.version, state)) {
      const after: StoredTask = {
        ...row,
        ...stateFields(row.recordedAt, state),
        version: row.version + 1,
      };
      return { before: row, after };
    }
    row = await store.get(task.taskId);
  }
  return undefined;
}

/** Whether `state` tells more than `row` knows (see the file comment). */
function isNews(row: StoredTask, state: TaskState): boolean {
  if (row.status === 'pending') return false;
  if (isTerminalStatus(row.status) && !isTerminalStatus(state.status)) return false;
  const rowUpdated = Date.parse(row.lastUpdatedAt ?? '');
  const seenUpdated = Date.parse(state.lastUpdatedAt ?? '');
  if (seenUpdated < rowUpdated) return false;
  const seen = stateFields(row.recordedAt, state);
  return (
    seen.status !== row.status ||
    seen.statusMessage !== row.statusMessage ||
    seen.lastUpdatedAt !== row.lastUpdatedAt ||
    seen.ttlMs !== row.ttlMs ||
    seen.pollIntervalMs !== row.pollIntervalMs
  );
}
