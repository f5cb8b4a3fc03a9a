/*
 * Steps 3–6 of every task operation (docs/contracts/tasks-and-apps.md §2.7, §2.8), for both
 * eras' relays: the row exists and is the caller's (else E1, alike for unknown and foreign ids),
 * has not expired (E2, the owner only), its server is still configured with the identity it was
 * made on (else E1, and the row goes: a new server never inherits tasks), and the caller may use
 * its tool now (else E1). A row made through a backend of the other era is refused with a clear
 * error, never reached through the router: a row's era is fixed at creation and the
 * CrossEraTaskRelay sends every row to the relay of its backend's era.
 */
import type { BrokerServerConfig } from '../config';
import { serverIdentityOf } from '../identity/serverIdentity';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { TaskOutcome } from './TaskAuditor';
import { TASK_EXPIRED, TASK_NOT_FOUND, type TaskError } from './taskErrors';
import type { StoredTask, TaskStore } from './TaskStore';
import type { ClientRequestTelemetry } from '../telemetry/BrokerTelemetry';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { TaskStreamAsker } from '../types';

/** Who asks, and whether they may use a task's tool now. */
export interface TaskCaller {
  readonly principal: string;
  /**
   * `mcp-broker.tool.use` of `tool` (the server's own name) on `server`, decided now;
   * `toolAnnotations` (the row's JSON) decide a tool the server no longer lists (§2.8).
   */
  readonly mayUse: (server: string, tool: string, toolAnnotations?: string) => boolean;
  readonly traceId?: string;
  /** The client request's telemetry: the task's backend requests are its CLIENT spans. */
  readonly telemetry?: ClientRequestTelemetry;
  /** The era the caller speaks (audited as `clientEra`); absent: legacy. */
  readonly era?: 'legacy' | 'modern';
  /**
   * The relayable client capabilities the request declared (its session's, or its `_meta`'s):
   * the pinned backend session of a task it creates declares them (contract §2.12.1).
   */
  readonly capabilities?: RelayedClientCapabilities;
  /**
   * Where a task's backend may put its requests to the caller during this operation (a
   * 2025-11-25 client's `tasks/result` stream; `server`: the task's); absent, or undefined
   * for `server`: nowhere, they are refused towards the backend.
   */
  readonly askOn?: (server: string) => TaskStreamAsker | undefined;
}

/** The caller's usable task and its backend, or the refusal and the audit outcome. */
export type FoundTask<B> =
  | { readonly task: StoredTask; readonly backend: B }
  | { readonly refusal: TaskError; readonly outcome: TaskOutcome; readonly task?: StoredTask };

/** The task's server, if it is still configured with the identity the task was made on. */
export function backendOfTask<B extends { readonly server: BrokerServerConfig }>(
  backendOf: (server: string) => B | undefined,
  task: StoredTask,
): B | undefined {
  const backend = backendOf(task.server);
  return backend !== undefined && serverIdentityOf(backend.server) === task.serverIdentity
    ? backend
    : undefined;
}

/**
 * See the file comment; `backendEra` is the era the asking relay speaks to backends (undefined:
 * either, for a caller that relays nothing to the backend, such as a listen filter).
 */
export async function findOwnTask<B extends { readonly server: BrokerServerConfig }>(
  store: TaskStore,
  backendOf: (server: string) => B | undefined,
  backendEra: StoredTask['backendEra'] | undefined,
  caller: TaskCaller,
  taskId: unknown,
  now: number,
): Promise<FoundTask<B>> {
  const task = typeof taskId === 'string' ? await store.get(taskId) : undefined;
  if (
    task === undefined ||
    task.status === 'pending' ||
    (task.backendTaskId === undefined && task.heldResult === undefined)
  ) {
    return { refusal: TASK_NOT_FOUND, outcome: 'not-found' };
  }
  // Someone else's task answers exactly like one that does not exist.
  if (task.principal !== caller.principal) return { refusal: TASK_NOT_FOUND, outcome: 'foreign' };
  if (task.expiresAt <= now) return { refusal: TASK_EXPIRED, outcome: 'expired', task };
  const backend = backendOfTask(backendOf, task);
  if (backend === undefined) {
    // The server was removed or replaced: a new server never inherits tasks.
    await store.delete(task.taskId);
    return { refusal: TASK_NOT_FOUND, outcome: 'not-found', task };
  }
  if (!caller.mayUse(task.server, task.tool, task.toolAnnotations)) {
    return { refusal: TASK_NOT_FOUND, outcome: 'denied', task };
  }
  if (backendEra !== undefined && task.backendEra !== backendEra) {
    return { refusal: eraMixNotRelayed(task), outcome: 'failed', task };
  }
  return { task, backend };
}

/** A task of a backend of the other era, asked of this era's relay (see the file comment). */
function eraMixNotRelayed(task: StoredTask): TaskError {
  const revision = task.backendEra === 'legacy' ? '2025-11-25' : '2026-07-28';
  return {
    httpStatus: 200,
    error: {
      code: JsonRpcErrorCode.InvalidParams,
      message: `Failed to retrieve task: it runs on MCP server "${task.server}", which speaks ${revision}; ask for it with ${revision} requests`,
      data: { reason: 'task-era-not-relayed', server: task.server },
    },
  };
}
