/*
 * The slot a task-creating call reserves under its person's bound of open tasks before the
 * backend is asked (docs/contracts/tasks-and-apps.md §2.6), for every relay that creates tasks
 * (LegacyTaskRelay, ModernTaskRelay, HeldTasks): the broker's credential mode, the tool's
 * annotations when their JSON is short enough to keep, at most `4 × perPerson` retained rows, and
 * a pending slot that lapses after the backend's answer time plus PENDING_SLOT_GRACE_MS.
 */
import type { TasksConfig } from '../config';
import { PENDING_SLOT_GRACE_MS, type TaskSlot, type TaskStore } from './TaskStore';

/** Longest tool `annotations` JSON kept in a row (longer ones are not kept). */
const MAX_TOOL_ANNOTATIONS_CHARS = 1024;

/** What a relay knows of a task when it reserves its slot. */
export interface TaskSlotRequest extends Omit<TaskSlot, 'toolAnnotations' | 'credentialMode'> {
  /** The tool's `annotations` at creation (kept as JSON when short enough). */
  readonly toolAnnotations?: Record<string, unknown> | undefined;
}

/**
 * Reserves `request`'s slot in `store` at `now` under `config.perPerson` (see the file comment);
 * `answerWithinMs` is how long the backend may take to answer. False when the person's bound is
 * reached.
 */
export function reserveTaskSlot(
  store: TaskStore,
  config: Pick<TasksConfig, 'perPerson'>,
  request: TaskSlotRequest,
  now: number,
  answerWithinMs: number,
): Promise<boolean> {
  const { toolAnnotations, ...slot } = request;
  const annotations = toolAnnotations === undefined ? undefined : JSON.stringify(toolAnnotations);
  return store.reserve(
    {
      ...slot,
      ...(annotations !== undefined && annotations.length <= MAX_TOOL_ANNOTATIONS_CHARS
        ? { toolAnnotations: annotations }
        : {}),
      credentialMode: 'broker',
    },
    { perPerson: config.perPerson, retained: 4 * config.perPerson },
    now,
    now + answerWithinMs + PENDING_SLOT_GRACE_MS,
  );
}
