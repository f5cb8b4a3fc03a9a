/*
 * A task as a client is shown it, from its row (docs/contracts/tasks-and-apps.md §2.7, §2.10):
 * the broker id and the row's state, never the backend's id. The 2025-11-25 `Task` and the
 * 2026-07-28 `Task` differ only in the names of two fields (`ttl`/`ttlMs`,
 * `pollInterval`/`pollIntervalMs`, both in ms); the members come in the same order in both.
 */
import type { StoredTask, StoredTaskStatus } from './TaskStore';

/** The members both eras' `Task` share (types, not interfaces: they are plain JSON records). */
type ShownTaskCore = {
  readonly taskId: string;
  readonly status: StoredTaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
};

/** A 2025-11-25 `Task` from a row. */
export type LegacyTaskOfRow = ShownTaskCore & {
  readonly ttl: number | null;
  readonly pollInterval?: number;
};

/** A 2026-07-28 `Task` from a row. */
export type ModernTaskOfRow = ShownTaskCore & {
  readonly ttlMs: number | null;
  readonly pollIntervalMs?: number;
};

/** What a backend's answer tells of a task's times when the row lacks them. */
export interface SeenTaskTimes {
  readonly createdAt?: string;
  readonly lastUpdatedAt?: string;
}

/**
 * `row` as `era`'s `Task`: the row's status as is, its times (else `seen`'s, else the time the
 * row was recorded) and its ttl (`null` when unknown).
 */
export function taskOfRow(row: StoredTask, era: 'legacy', seen?: SeenTaskTimes): LegacyTaskOfRow;
export function taskOfRow(row: StoredTask, era: 'modern', seen?: SeenTaskTimes): ModernTaskOfRow;
export function taskOfRow(
  row: StoredTask,
  era: 'legacy' | 'modern',
  seen?: SeenTaskTimes,
): LegacyTaskOfRow | ModernTaskOfRow {
  const recorded = new Date(row.recordedAt).toISOString();
  const [ttl, pollInterval] =
    era === 'legacy' ? ['ttl', 'pollInterval'] : ['ttlMs', 'pollIntervalMs'];
  const shown: Record<string, unknown> = {
    taskId: row.taskId,
    status: row.status,
    ...(row.statusMessage === undefined ? {} : { statusMessage: row.statusMessage }),
    createdAt: row.createdAt ?? seen?.createdAt ?? recorded,
    lastUpdatedAt: row.lastUpdatedAt ?? seen?.lastUpdatedAt ?? recorded,
    [ttl]: row.ttlMs ?? null,
    ...(row.pollIntervalMs === undefined ? {} : { [pollInterval]: row.pollIntervalMs }),
  };
  return shown as unknown as LegacyTaskOfRow | ModernTaskOfRow;
}
