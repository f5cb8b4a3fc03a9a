/*
 * What travels between replicas when a task changed (docs/contracts/tasks-and-apps.md §2.10
 * "Fan-out"): one `message` signal to the owner's address `tasks:<base64url SHA-256 of
 * principal>`, not consumed (every replica with the owner's streams reads it), expiring after
 * 60 s. Its payload is the task as a 2026-07-28 `DetailedTask` with the broker's id — what a
 * modern `notifications/tasks` carries — beside what delivery needs: the row's own (2025-11-25)
 * status, which a legacy stream is told, and the server, its identity and the tool (with its
 * annotations at creation), which delivery checks again (§2.8). No backend id, no credential. A task that ended with its final
 * payload read (finalPayload.ts) carries it by the §2.12 status mapping: a result (`isError` or
 * not) is a `completed` task with that `result`, a JSON-RPC error a `failed` one with that
 * `error`; the legacy status follows the same mapping back (a tool error is `failed`). The
 * result's UI URIs are the broker's and its `related-task` meta is removed.
 */
import { createHash } from 'node:crypto';
import { isPlainObject, type JsonRpcErrorObject, type JsonRpcId } from '../protocol/jsonRpc';
import { ModernMetaKey } from '../protocol/modernEra';
import { withoutRelatedTask } from '../protocol/modernTasks';
import type { LegacyTaskPayload } from '../protocol/taskEraMapping';
import { resultWithBrokerUiUris } from '../protocol/uiResourceUris';
import { taskOfRow } from './taskOfRow';
import type { StoredTask } from './TaskStore';

/** How long a task's signal is kept for the replicas that read it. */
export const TASK_SIGNAL_TTL_MS = 60_000;

/** Largest notification payload sent to a client (bytes of the signal's JSON). */
export const MAX_TASK_NOTIFICATION_BYTES = 1024 * 1024;

/** The 2026-07-28 `DetailedTask` of a signal (broker id; an ended task's payload when read). */
export interface SignalledDetailedTask {
  readonly taskId: string;
  readonly status: 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
  readonly statusMessage?: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number | null;
  readonly pollIntervalMs?: number;
  /** A `completed` task's result (also a tool error). */
  readonly result?: Record<string, unknown>;
  /** A `failed` task's JSON-RPC error. */
  readonly error?: JsonRpcErrorObject;
}

/** The payload of a task's signal; see the file comment. */
export interface TaskStatusSignal {
  /** The task for a 2026-07-28 stream. */
  readonly task: SignalledDetailedTask;
  /** The row's status (2025-11-25 vocabulary: a tool error is `failed`). */
  readonly legacyStatus: SignalledDetailedTask['status'];
  readonly server: string;
  /** The identity the task was made on (a new server under the name never inherits it). */
  readonly serverIdentity: string;
  /** The backend's own tool name. */
  readonly tool: string;
  /** The tool's annotations at the task's creation (JSON): delivery decides on them when the tool left its server's list. */
  readonly toolAnnotations?: string;
  /** Epoch ms (publisher's clock): streams opened later do not hear of it. */
  readonly publishedAt: number;
  /**
   * The row's version after the change: a replica delivers a task's changes in version order and
   * each once (signals of two writers may be read in either order, and the bus shows a live
   * signal at every read).
   */
  readonly version: number;
}

/** The bus address of a person's task signals. */
export function taskSignalAddress(principal: string): string {
  return `tasks:${createHash('sha256').update(principal).digest('base64url')}`;
}

/**
 * The signal of `task`'s state as its row now says (a row past `pending`), with its final
 * payload when the change that ended it read one (see the file comment).
 */
export function taskStatusSignalOf(
  task: StoredTask,
  publishedAt: number,
  finalPayload?: LegacyTaskPayload,
): TaskStatusSignal {
  const rowStatus = task.status === 'pending' ? 'working' : task.status;
  const ended = rowStatus === 'completed' || rowStatus === 'failed';
  const payload = ended ? finalPayload : undefined;
  let status: SignalledDetailedTask['status'] = rowStatus;
  let legacyStatus: SignalledDetailedTask['status'] = rowStatus;
  let inlined: Pick<SignalledDetailedTask, 'result' | 'error'> = {};
  if (payload !== undefined && 'error' in payload) {
    status = 'failed';
    legacyStatus = 'failed';
    inlined = { error: payload.error };
  } else if (payload !== undefined) {
    status = 'completed';
    legacyStatus = payload.result.isError === true ? 'failed' : 'completed';
    inlined = {
      result: resultWithBrokerUiUris(task.server, withoutRelatedTask(payload.result)),
    };
  }
  return {
    // `status` keeps its place among the members.
    task: { ...taskOfRow(task, 'modern'), status, ...inlined },
    legacyStatus,
    server: task.server,
    serverIdentity: task.serverIdentity,
    tool: task.tool,
    ...(task.toolAnnotations === undefined ? {} : { toolAnnotations: task.toolAnnotations }),
    publishedAt,
    version: task.version,
  };
}

/** The payload of a signal as read back, or undefined when it is not one of ours. */
export function parseTaskStatusSignal(payload: string | undefined): TaskStatusSignal | undefined {
  if (payload === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(payload);
    if (
      !isPlainObject(parsed) ||
      !isPlainObject(parsed.task) ||
      typeof parsed.task.taskId !== 'string' ||
      typeof parsed.legacyStatus !== 'string' ||
      typeof parsed.server !== 'string' ||
      typeof parsed.serverIdentity !== 'string' ||
      typeof parsed.tool !== 'string' ||
      (parsed.toolAnnotations !== undefined && typeof parsed.toolAnnotations !== 'string') ||
      typeof parsed.publishedAt !== 'number' ||
      typeof parsed.version !== 'number'
    ) {
      return undefined;
    }
    return parsed as unknown as TaskStatusSignal;
  } catch {
    return undefined;
  }
}

/** The 2025-11-25 `notifications/tasks/status` of a signal (a `Task`, no result). */
export function legacyTaskStatusNotification(signal: TaskStatusSignal) {
  const { task } = signal;
  return {
    jsonrpc: '2.0' as const,
    method: 'notifications/tasks/status',
    params: {
      taskId: task.taskId,
      status: signal.legacyStatus,
      ...(task.statusMessage === undefined ? {} : { statusMessage: task.statusMessage }),
      createdAt: task.createdAt,
      lastUpdatedAt: task.lastUpdatedAt,
      ttl: task.ttlMs,
      ...(task.pollIntervalMs === undefined ? {} : { pollInterval: task.pollIntervalMs }),
    },
  };
}

/**
 * The 2026-07-28 `notifications/tasks` of a signal on a listen stream: the `DetailedTask`,
 * tagged with the stream's subscription id (the listen request's JSON-RPC id).
 */
export function modernTaskNotification(signal: TaskStatusSignal, subscriptionId: JsonRpcId) {
  return {
    jsonrpc: '2.0' as const,
    method: 'notifications/tasks',
    params: { ...signal.task, _meta: { [ModernMetaKey.subscriptionId]: subscriptionId } },
  };
}
