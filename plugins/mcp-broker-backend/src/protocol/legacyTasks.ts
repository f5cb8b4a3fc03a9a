/*
 * The 2025-11-25 `tasks` capability's wire shapes the broker reads and writes
 * (docs/contracts/tasks-and-apps.md §2.1.1, §2.2): whether a server supports task-augmented
 * `tools/call`, what the broker declares to its clients, the `related-task` meta key, and the
 * `Task` object in a result. No HTTP, no state: plain data and pure functions.
 */
import { isPlainObject } from './jsonRpc';
import { taskObjectOf } from './taskObjectOf';

/** `_meta` key naming the task a message relates to. */
export const RELATED_TASK_META = 'io.modelcontextprotocol/related-task';

/** What the broker declares in `initialize` when it relays tasks (contract §2.2). */
export const BROKER_TASKS_CAPABILITY: Readonly<Record<string, unknown>> = Object.freeze({
  list: {},
  cancel: {},
  requests: { tools: { call: {} } },
});

/** True when a server's capabilities declare task-augmented `tools/call`. */
export function supportsTaskCalls(capabilities: Readonly<Record<string, unknown>>): boolean {
  const { tasks } = capabilities;
  if (!isPlainObject(tasks) || !isPlainObject(tasks.requests)) return false;
  const { tools } = tasks.requests;
  return isPlainObject(tools) && isPlainObject(tools.call);
}

/** The statuses of a 2025-11-25 `Task`. */
export const LEGACY_TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const;

/** A 2025-11-25 `Task` as a server sent it (fields the broker reads). */
export interface LegacyTask {
  taskId: string;
  status: (typeof LEGACY_TASK_STATUSES)[number];
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttl?: number | null;
  pollInterval?: number;
}

/** `value` as a 2025-11-25 `Task`, or undefined when it is not one. */
export function legacyTaskOf(value: unknown): LegacyTask | undefined {
  return taskObjectOf(value, LEGACY_TASK_STATUSES, { ttl: 'ttl', pollInterval: 'pollInterval' });
}
