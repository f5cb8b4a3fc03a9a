/*
 * A pinned backend session the backend forgot (docs/contracts/tasks-and-apps.md §2.11): a task
 * request on it that the backend refuses as an unknown session (HTTP 404, or 400 naming the
 * session: the channel's `session-lost`) is sent once more on a new backend session of the task's
 * person with the task's credential. When the backend answers there about the task (anything but
 * "not found"), every row of the forgotten session is moved to the new one, so every replica
 * sends later requests there. When it does not know the task there, its answer passes (the relay
 * answers E3 and deletes the row, as for any lost task); a second loss is the caller's too. Only
 * once per request: never a loop. When the rows cannot be written, the answer still passes: the
 * rows keep the forgotten session, which is replaced again at their next use.
 */
import { BackendError } from '../backend/backendErrors';
import type { LegacySession } from '../backend/LegacyChannel';
import type { JsonRpcResponse } from '../protocol/jsonRpc';
import { saysNotFound } from './backendTaskError';
import type { StoredTask, TaskStore } from './TaskStore';

/** What {@link sendReplacingForgottenSession} needs besides the task. */
export interface PinnedSessionReplacement {
  /** Sends the task's request on the backend session `sessionId`. */
  send(sessionId: string | undefined): Promise<JsonRpcResponse>;
  /** A new backend session of the task's person, with the task's credential. */
  newSession(): Promise<LegacySession>;
  store: TaskStore;
}

/** Whether `error` says the backend forgot the broker's session (restart, expiry). */
export function isSessionLost(error: unknown): boolean {
  return error instanceof BackendError && error.reason === 'session-lost';
}

/** Sends `task`'s request on its pinned session, replacing it once if forgotten (file comment). */
export async function sendReplacingForgottenSession(
  task: Pick<StoredTask, 'backendSessionId' | 'principal' | 'server' | 'serverIdentity'>,
  replacement: PinnedSessionReplacement,
): Promise<JsonRpcResponse> {
  const forgotten = task.backendSessionId;
  try {
    return await replacement.send(forgotten);
  } catch (error) {
    if (forgotten === undefined || !isSessionLost(error)) throw error;
  }
  const session = await replacement.newSession();
  const response = await replacement.send(session.id);
  if (session.id !== undefined && !('error' in response && saysNotFound(response.error))) {
    // Best effort: rows still naming the forgotten session are replaced again at their next use.
    await replacement.store
      .replaceBackendSession(task, forgotten, session.id)
      .catch(() => undefined);
  }
  return response;
}
