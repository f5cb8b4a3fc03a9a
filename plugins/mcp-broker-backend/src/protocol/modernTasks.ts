/*
 * The 2026-07-28 tasks extension's wire shapes the broker reads and writes
 * (`io.modelcontextprotocol/tasks`, SEP-2663; docs/contracts/tasks-and-apps.md §2.1.2, §2.2):
 * whether a client declared the extension on a request or a server in its `server/discover`,
 * the declaration the broker relays, a backend's `-32021` that asks for it, and the flat `Task`
 * of a `CreateTaskResult` / `DetailedTask`. No HTTP, no state: plain data and pure functions.
 */
import { isPlainObject, JsonRpcErrorCode, type JsonRpcErrorObject } from './jsonRpc';
import { RELATED_TASK_META } from './legacyTasks';
import { taskObjectOf } from './taskObjectOf';

/** The tasks extension's id (its key in `capabilities.extensions`). */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** True when `capabilities` (a client's or a server's) declare `extension` (an object). */
export function declaresExtension(
  capabilities: Readonly<Record<string, unknown>> | undefined,
  extension: string,
): boolean {
  const extensions = capabilities?.extensions;
  return isPlainObject(extensions) && isPlainObject(extensions[extension]);
}

/** True when `capabilities` (a client's or a server's) declare the tasks extension. */
export function declaresTasksExtension(
  capabilities: Readonly<Record<string, unknown>> | undefined,
): boolean {
  return declaresExtension(capabilities, TASKS_EXTENSION);
}

/** A copy of `capabilities` that declares the tasks extension (`{}`, as the extension says). */
export function withTasksExtension(
  capabilities: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const extensions = isPlainObject(capabilities.extensions) ? capabilities.extensions : {};
  return { ...capabilities, extensions: { ...extensions, [TASKS_EXTENSION]: {} } };
}

/** True for a backend's `-32021` that names the tasks extension among what it requires. */
export function requiresTasksExtension(error: JsonRpcErrorObject): boolean {
  if (error.code !== JsonRpcErrorCode.MissingRequiredClientCapability) return false;
  const data = isPlainObject(error.data) ? error.data : undefined;
  const required = isPlainObject(data?.requiredCapabilities) ? data.requiredCapabilities : {};
  return declaresTasksExtension(required);
}

/** The statuses of a SEP-2663 task. */
export const MODERN_TASK_STATUSES = [
  'working',
  'input_required',
  'completed',
  'failed',
  'cancelled',
] as const;

/** A 2026-07-28 `Task` as a server sent it (the fields the broker reads). */
export interface ModernTask {
  taskId: string;
  status: (typeof MODERN_TASK_STATUSES)[number];
  statusMessage?: string;
  createdAt?: string;
  lastUpdatedAt?: string;
  ttlMs?: number | null;
  pollIntervalMs?: number;
}

/** `value` (a `CreateTaskResult` or `DetailedTask`) as a 2026-07-28 `Task`, or undefined. */
export function modernTaskOf(value: unknown): ModernTask | undefined {
  const names = { ttl: 'ttlMs', pollInterval: 'pollIntervalMs' };
  const task = taskObjectOf(value, MODERN_TASK_STATUSES, names);
  if (task === undefined) return undefined;
  const { ttl, pollInterval, ...shared } = task;
  return { ...shared, ttlMs: ttl, pollIntervalMs: pollInterval };
}

/**
 * A backend's acknowledgement of `tasks/update` or `tasks/cancel` as the client gets it: its
 * `resultType` and `_meta` (without `related-task`) only — an ack carries nothing else, and a
 * member echoing the task would carry the backend's id.
 */
export function taskAckOf(result: Record<string, unknown>): Record<string, unknown> {
  const { _meta: meta } = withoutRelatedTask(result);
  return {
    ...(result.resultType === undefined ? {} : { resultType: result.resultType }),
    ...(isPlainObject(meta) && Object.keys(meta).length > 0 ? { _meta: meta } : {}),
  };
}

/** A task's input requests without the 2025-11-25 `related-task` meta in their params. */
export function inputRequestsWithoutRelatedTask(
  requests: Record<string, unknown>,
): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(requests).map(([key, request]) => [
      key,
      isPlainObject(request) && isPlainObject(request.params)
        ? { ...request, params: withoutRelatedTask(request.params) }
        : request,
    ]),
  );
}

/** `result` without the 2025-11-25 `related-task` meta (never shown to a 2026-07-28 client). */
export function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = isPlainObject(result._meta) ? result._meta : undefined;
  if (meta === undefined || !(RELATED_TASK_META in meta)) return result;
  const { [RELATED_TASK_META]: _legacy, ...rest } = meta;
  return { ...result, _meta: rest };
}
