/*
 * A backend's task as the row keeps it (docs/contracts/tasks-and-apps.md §2.4, §2.5): the same
 * rules for both eras' wire shapes — the lifetime capped by `mcpBroker.tasks.maxTtl` (an
 * unlimited one becomes the cap), whole milliseconds within the columns' types, timestamps kept
 * only when they fit their column.
 */
import type { StoredTaskStatus, TaskState } from './TaskStore';

/** The largest poll interval kept (the column is a 32-bit integer). */
const MAX_POLL_INTERVAL_MS = 2_147_483_647;
/** The widest timestamp kept (the columns hold 40 characters; ISO 8601 needs 24 to 35). */
const MAX_TIMESTAMP_LENGTH = 40;

/** A backend's task in era-neutral words (2025: `ttl`/`pollInterval`, 2026: `…Ms`). */
export interface BackendTaskFields {
  status: Exclude<StoredTaskStatus, 'pending'>;
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  /** Undefined or null: unlimited. */
  ttlMs?: number | null;
  pollIntervalMs?: number;
}

/** The row's state from a backend's task, its ttl capped by `maxTtlMs`. */
export function observedTaskState(task: BackendTaskFields, maxTtlMs: number): TaskState {
  // Whole milliseconds within the columns' types (a backend may send 1500.5 or 2^40).
  const ttlMs =
    task.ttlMs === undefined || task.ttlMs === null
      ? maxTtlMs
      : Math.floor(Math.min(task.ttlMs, maxTtlMs));
  return {
    status: task.status,
    ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
    ...(timestampFits(task.createdAt) ? { createdAt: task.createdAt } : {}),
    ...(timestampFits(task.lastUpdatedAt) ? { lastUpdatedAt: task.lastUpdatedAt } : {}),
    ttlMs,
    ...(task.pollIntervalMs === undefined
      ? {}
      : { pollIntervalMs: Math.floor(Math.min(task.pollIntervalMs, MAX_POLL_INTERVAL_MS)) }),
  };
}

function timestampFits(value: string | undefined): value is string {
  return value !== undefined && value.length <= MAX_TIMESTAMP_LENGTH;
}
