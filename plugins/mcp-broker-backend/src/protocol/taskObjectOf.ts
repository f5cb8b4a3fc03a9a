/*
 * The reader both eras' task objects share (docs/contracts/tasks-and-apps.md §2.1): a 2025-11-25
 * `Task` (legacyTasks.ts) and a 2026-07-28 `Task` (modernTasks.ts) have the same members but for
 * the names of the lifetime and poll interval (`ttl`/`ttlMs`, `pollInterval`/`pollIntervalMs`).
 * A member of the wrong type reads as absent; an object without a string `taskId` or a known
 * `status` is not a task. No HTTP, no state: a pure function.
 */
import { isPlainObject } from './jsonRpc';

/** The names an era gives a task's lifetime and poll interval. */
export interface TaskMemberNames {
  readonly ttl: string;
  readonly pollInterval: string;
}

/** A task object as read, its lifetime and poll interval under neutral names. */
export interface TaskObject<S extends string> {
  taskId: string;
  status: S;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttl?: number | null;
  pollInterval?: number;
}

/** `value` as a task object (a status among `statuses`, members named `names`), or undefined. */
export function taskObjectOf<S extends string>(
  value: unknown,
  statuses: readonly S[],
  names: TaskMemberNames,
): TaskObject<S> | undefined {
  if (!isPlainObject(value) || typeof value.taskId !== 'string') return undefined;
  const status = value.status;
  if (!statuses.includes(status as S)) return undefined;
  const text = (field: unknown) => (typeof field === 'string' ? field : undefined);
  const count = (field: unknown) =>
    typeof field === 'number' && Number.isFinite(field) && field >= 0 ? field : undefined;
  const ttl = value[names.ttl];
  return {
    taskId: value.taskId,
    status: status as S,
    statusMessage: text(value.statusMessage),
    createdAt: text(value.createdAt),
    lastUpdatedAt: text(value.lastUpdatedAt),
    ttl: ttl === null ? null : count(ttl),
    pollInterval: count(value[names.pollInterval]),
  };
}
