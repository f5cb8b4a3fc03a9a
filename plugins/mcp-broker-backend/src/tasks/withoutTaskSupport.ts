/*
 * A tool as 2025-11-25 clients see it when the broker relays no task of its server (contract
 * tasks-and-apps §2.2): the backend lacks `tasks.requests.tools.call`, or tasks are switched off.
 * Its `execution.taskSupport` is removed, so no client asks for a task the broker would not
 * relay (a `params.task` sent anyway is removed and the call runs plain).
 */
import { isPlainObject } from '../protocol/jsonRpc';

/** `tool` without `execution.taskSupport` (and without `execution` once it is empty). */
export function withoutTaskSupport(tool: Record<string, unknown>): Record<string, unknown> {
  const { execution } = tool;
  if (!isPlainObject(execution) || !('taskSupport' in execution)) return tool;
  const { taskSupport: _removed, ...rest } = execution;
  const { execution: _execution, ...shown } = tool;
  return Object.keys(rest).length === 0 ? shown : { ...shown, execution: rest };
}
