/*
 * The translation of task messages between the two eras (docs/contracts/tasks-and-apps.md §2.12,
 * the status mapping at its top; §2.12.4): a 2025-11-25 `Task` (already carrying the broker id)
 * as a 2026-07-28 one (`ttl`/`pollInterval` → `ttlMs`/`pollIntervalMs`, no `related-task`
 * meta), a legacy task's final payload inlined into a `DetailedTask`, and whether a legacy tool
 * may run as a task. No HTTP, no state: plain data and pure functions.
 */
import { isPlainObject, type JsonRpcErrorObject } from './jsonRpc';
import { ModernMetaKey } from './modernEra';
import { withoutRelatedTask } from './modernTasks';

/** A tool's 2025-11-25 `execution.taskSupport` (absent or unknown: `forbidden`). */
export type LegacyTaskSupport = 'forbidden' | 'optional' | 'required';

/** `tool`'s `execution.taskSupport` as its 2025-11-25 server lists it. */
export function legacyTaskSupportOf(tool: unknown): LegacyTaskSupport {
  const execution = isPlainObject(tool) ? tool.execution : undefined;
  const support = isPlainObject(execution) ? execution.taskSupport : undefined;
  return support === 'optional' || support === 'required' ? support : 'forbidden';
}

/**
 * A 2025-11-25 `Task` (or a result spreading one) as a 2026-07-28 `Task`: `ttl` and
 * `pollInterval` renamed (a message never carries both names), `related-task` meta removed,
 * other members kept.
 */
export function modernTaskFromLegacy(task: Record<string, unknown>): Record<string, unknown> {
  const { ttl, pollInterval, ...rest } = withoutRelatedTask(task);
  return {
    ...rest,
    ttlMs: typeof ttl === 'number' ? ttl : null,
    ...(typeof pollInterval === 'number' ? { pollIntervalMs: pollInterval } : {}),
  };
}

/** The final answer of a legacy `tasks/result`: the tool's result, or its JSON-RPC error. */
export type LegacyTaskPayload =
  { readonly result: Record<string, unknown> } | { readonly error: JsonRpcErrorObject };

/**
 * A 2026-07-28 `DetailedTask` of a terminal legacy task (`task` already modern-shaped) with its
 * final payload inlined per the status mapping: a result (`isError` or not) makes it `completed`
 * with `result`; a JSON-RPC error makes it `failed` with `error`.
 */
export function detailedTaskFromLegacyPayload(
  task: Record<string, unknown>,
  payload: LegacyTaskPayload,
): Record<string, unknown> {
  if ('error' in payload) return { ...task, status: 'failed', error: payload.error };
  return { ...task, status: 'completed', result: withoutRelatedTask(payload.result) };
}

/**
 * A 2026-07-28 `Task` or `DetailedTask` (already carrying the broker id) as a 2025-11-25 `Task`:
 * `ttlMs`/`pollIntervalMs` renamed back, `completed` with an `isError: true` result shown as
 * `failed` (the status mapping), the inlined `result`/`error`/`inputRequests`, `resultType` and
 * the broker's `serverInfo` meta left out; other `_meta` members pass.
 */
export function legacyTaskFromModern(task: Record<string, unknown>): Record<string, unknown> {
  const {
    ttlMs,
    pollIntervalMs,
    resultType: _resultType,
    result,
    error: _error,
    inputRequests: _inputRequests,
    _meta,
    ...rest
  } = task;
  const { [ModernMetaKey.serverInfo]: _serverInfo, ...meta } = isPlainObject(_meta) ? _meta : {};
  const toolError = isPlainObject(result) && result.isError === true;
  return {
    ...rest,
    ...(rest.status === 'completed' && toolError ? { status: 'failed' } : {}),
    ttl: typeof ttlMs === 'number' ? ttlMs : null,
    ...(typeof pollIntervalMs === 'number' ? { pollInterval: pollIntervalMs } : {}),
    ...(Object.keys(meta).length === 0 ? {} : { _meta: meta }),
  };
}
