/*
 * A terminal task's final payload as its published change carries it (docs/contracts/
 * tasks-and-apps.md §2.10 "Fan-out": the `DetailedTask` of a task that ended has its `result` or
 * `error`; for a legacy backend's task, fetched as §2.12.4 does, with a legacy `tasks/result`,
 * which no longer blocks). A 2026-07-28 backend's `tasks/get` answer inlines it already. No
 * payload is better than a wrong one: an answer that is neither a result nor a JSON-RPC error of
 * the task (the backend lost it, a failure on the way) gives none, and the change is published
 * without it.
 */
import { isPlainObject, type JsonRpcErrorObject, type JsonRpcResponse } from '../protocol/jsonRpc';
import type { LegacyTaskPayload } from '../protocol/taskEraMapping';
import { saysNotFound, withBrokerTaskId } from './backendTaskError';
import type { ObservedChange } from './observeTaskState';

/** Whether `change` ended its task with a payload to fetch (`completed` or `failed`). */
function endsWithPayload(change: ObservedChange): boolean {
  const { before, after } = change;
  return (
    before.status !== after.status && (after.status === 'completed' || after.status === 'failed')
  );
}

/**
 * The payload a 2026-07-28 `tasks/get` answer inlines (`result`, else `error`); undefined when
 * it has neither.
 */
export function finalPayloadOfDetailedTask(
  answer: Record<string, unknown>,
): LegacyTaskPayload | undefined {
  if (isPlainObject(answer.result)) return { result: answer.result };
  if (isPlainObject(answer.error) && typeof answer.error.code === 'number') {
    return { error: answer.error as unknown as JsonRpcErrorObject };
  }
  return undefined;
}

/**
 * `change` with its task's final payload when the change ended the task (`completed` or
 * `failed`): `readPayload` sends the legacy `tasks/result` of the task. As is otherwise, and when
 * the payload cannot be read (see the file comment).
 */
export async function withLegacyFinalPayload(
  change: ObservedChange,
  readPayload: () => Promise<JsonRpcResponse>,
): Promise<ObservedChange> {
  if (change.finalPayload !== undefined || !endsWithPayload(change)) return change;
  try {
    const response = await readPayload();
    if ('result' in response) return { ...change, finalPayload: { result: response.result } };
    return saysNotFound(response.error)
      ? change
      : { ...change, finalPayload: { error: withBrokerTaskId(response.error, change.after) } };
  } catch {
    return change;
  }
}
