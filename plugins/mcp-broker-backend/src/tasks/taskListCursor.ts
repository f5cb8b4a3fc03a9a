/*
 * The broker's own cursors of a legacy `tasks/list` (docs/contracts/tasks-and-apps.md §2.9):
 * `base64url(JSON {"v":1,"t":<recorded_at>,"id":"<task_id>"})` of a page's last item. A cursor
 * only says where a page continues; the query is always scoped to the caller, so a forged cursor
 * cannot widen anything. Anything that does not decode to exactly that shape is invalid.
 */
import type { TaskListPosition } from './TaskStore';

/** Longest cursor accepted (a task id is at most 300 characters). */
const MAX_CURSOR_LENGTH = 512;

/** The cursor of the page that continues after `position`. */
export function encodeTaskListCursor(position: TaskListPosition): string {
  return Buffer.from(
    JSON.stringify({ v: 1, t: position.recordedAt, id: position.taskId }),
  ).toString('base64url');
}

/** The position `cursor` names, or undefined when it is not a cursor the broker made. */
export function decodeTaskListCursor(cursor: unknown): TaskListPosition | undefined {
  if (typeof cursor !== 'string' || cursor.length > MAX_CURSOR_LENGTH) return undefined;
  if (!/^[A-Za-z0-9_-]*$/.test(cursor)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const { v, t, id, ...rest } = parsed as Record<string, unknown>;
  if (v !== 1 || Object.keys(rest).length > 0) return undefined;
  if (typeof t !== 'number' || !Number.isSafeInteger(t) || t < 0) return undefined;
  if (typeof id !== 'string' || id.length === 0 || id.length > 300) return undefined;
  return { recordedAt: t, taskId: id };
}
