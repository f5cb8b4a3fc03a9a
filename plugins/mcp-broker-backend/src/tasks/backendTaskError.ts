/*
 * A backend's JSON-RPC error about one of the broker's tasks, as the same-era relays answer it
 * (docs/contracts/tasks-and-apps.md §2.13): `-32602` "not found" means the backend lost the task
 * (E3, and its row is deleted); any other error passes with the backend's task id, wherever its
 * message or data names it, replaced by the broker's (§2.3: the backend's id never reaches a
 * client — an SDK backend says "Task <its id> has no result stored" of a cancelled task).
 */
import { JsonRpcErrorCode, type JsonRpcErrorObject } from '../protocol/jsonRpc';
import { taskLost } from './taskErrors';
import { taskRefusal, type TaskReply } from './TaskReply';
import type { StoredTask, TaskStore } from './TaskStore';

/** Whether a backend's error says that what the request named is unknown (`-32602` "not found"). */
export function saysNotFound(error: JsonRpcErrorObject): boolean {
  return error.code === JsonRpcErrorCode.InvalidParams && /not found/i.test(error.message);
}

/** The answer to the backend's `error` about `task` (see the file comment). */
export async function backendTaskError(
  store: TaskStore,
  task: StoredTask,
  error: JsonRpcErrorObject,
): Promise<TaskReply> {
  if (saysNotFound(error)) {
    await store.delete(task.taskId);
    return taskRefusal(taskLost(task.server));
  }
  return { error: withBrokerTaskId(error, task), httpStatus: 200 };
}

/** `error` with every mention of `task`'s backend id, in its message or data, made the broker's. */
export function withBrokerTaskId(
  error: JsonRpcErrorObject,
  task: Pick<StoredTask, 'taskId' | 'backendTaskId'>,
): JsonRpcErrorObject {
  const backendId = task.backendTaskId;
  if (backendId === undefined || backendId === '') return error;
  const replace = (text: string) => text.split(backendId).join(task.taskId);
  const data =
    error.data === undefined ? undefined : JSON.parse(replace(JSON.stringify(error.data)));
  return {
    ...error,
    message: replace(error.message),
    ...(data === undefined ? {} : { data }),
  };
}
