/*
 * The shared task table (docs/contracts/tasks-and-apps.md §2.4–§2.6, §2.9): what the broker
 * remembers of every task a person started through it, so that any replica can answer for it
 * after the client's connection and session are gone.
 *
 * Life of a row: `reserve` writes a `pending` slot under the person's bound of open tasks (the
 * count and the insert are one step: exact across replicas); `activate` turns the slot into the
 * task once the backend answered with one (or `release` deletes it when the backend answered
 * otherwise); every later observation of the task's state is written with `observe`, a
 * compare-and-set on `version`, so of two replicas that saw the same change exactly one writes
 * (and later publishes) it. A person keeps at most `retained` rows: reserving beyond that deletes
 * the person's oldest terminal rows. Rows expire at `recorded_at + ttl_ms`; a slot that never
 * became a task expires at the `expiresAt` it was reserved with (its replica died meanwhile);
 * `deleteExpired` sweeps both, and names the pinned backend sessions whose last rows its own
 * deletes removed (their DELETE is then that replica's to send, §2.11). An expired row is still
 * returned by `get` (its owner is told "Task has expired" until the sweep) but is neither counted
 * nor listed.
 *
 * The watcher's lease (`takeLease`, `releaseLease`) makes one replica poll a task for its
 * subscribers (contract §2.10); it never changes the row's state or version.
 *
 * Two implementations pass one contract suite (tasks.test.ts): `DatabaseTaskStore` (every
 * replica, `mcpBroker.sessionStore: database`) and `MemoryTaskStore` (one replica).
 */

/** A task's status as last observed; `pending` while the slot awaits the backend's answer. */
export type StoredTaskStatus =
  'pending' | 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

/** Statuses of a task that has not ended (they count against the per-person bound). */
export const OPEN_TASK_STATUSES: readonly StoredTaskStatus[] = [
  'pending',
  'working',
  'input_required',
];

/** Whether `status` is one a task never leaves. */
export function isTerminalStatus(status: StoredTaskStatus): boolean {
  return !OPEN_TASK_STATUSES.includes(status);
}

/** Whether a backend's `status`, whatever it holds, names an end (`completed`, `failed`, `cancelled`). */
export function namesTerminalStatus(status: unknown): boolean {
  return status === 'completed' || status === 'failed' || status === 'cancelled';
}

/** Extra life of a pending slot beyond the tool call timeout (its replica died meanwhile). */
export const PENDING_SLOT_GRACE_MS = 60_000;

/** Statuses of a task that is watched (open and no longer a pending slot). */
export const WATCHED_TASK_STATUSES: readonly StoredTaskStatus[] = ['working', 'input_required'];

/** What is known of a task when its slot is reserved (before the backend is asked). */
export interface TaskSlot {
  /** The broker task id (`brokerTaskId.ts`). */
  readonly taskId: string;
  /** Owner: `user:<ref>` or `service:<subject>`. */
  readonly principal: string;
  /** Configured server name. */
  readonly server: string;
  /** Base64url SHA-256 of the server's identity (a new server under the old name differs). */
  readonly serverIdentity: string;
  /** The backend's own tool name. */
  readonly tool: string;
  /** The tool's `annotations` at creation, JSON (re-authorization once the tool is gone). */
  readonly toolAnnotations?: string;
  /** Credential mode of the creating call (spec §11). */
  readonly credentialMode: string;
  /** The backend's era at creation. */
  readonly backendEra: 'legacy' | 'modern';
  /** `traceparent` of the creating SERVER span. */
  readonly creatingTrace?: string;
}

/** A task's observed state, as the backend last showed it (ttl already capped by the broker). */
export interface TaskState {
  readonly status: Exclude<StoredTaskStatus, 'pending'>;
  readonly statusMessage?: string;
  readonly createdAt?: string;
  readonly lastUpdatedAt?: string;
  /** Lifetime in ms shown to clients: the backend's, capped by `mcpBroker.tasks.maxTtl`. */
  readonly ttlMs: number;
  readonly pollIntervalMs?: number;
}

/** One row of the table. */
export interface StoredTask extends TaskSlot {
  readonly status: StoredTaskStatus;
  readonly statusMessage?: string;
  readonly createdAt?: string;
  readonly lastUpdatedAt?: string;
  readonly ttlMs?: number;
  readonly pollIntervalMs?: number;
  /** The backend's id, verbatim; absent while pending. */
  readonly backendTaskId?: string;
  /** Legacy backend: the backend session that created the task (pinned, §2.11). */
  readonly backendSessionId?: string;
  /**
   * A task the broker made itself from a backend's immediate answer (§2.12.3): the result JSON;
   * such a task has no backend id.
   */
  readonly heldResult?: string;
  /** Epoch ms (broker clock) when the slot was reserved: ordering and cursors. */
  readonly recordedAt: number;
  /** Epoch ms after which the task is expired. */
  readonly expiresAt: number;
  /** Observation counter for {@link TaskStore.observe}. */
  readonly version: number;
}

/** Position after which a page of a person's tasks continues (the last item of the page before). */
export interface TaskListPosition {
  readonly recordedAt: number;
  readonly taskId: string;
}

/** Bounds applied when a slot is reserved. */
export interface TaskBounds {
  /** Most open tasks (pending, working, input_required) per person, all replicas. */
  readonly perPerson: number;
  /** Most rows kept per person (oldest terminal rows are deleted beyond it). */
  readonly retained: number;
}

/** A pinned backend session (§2.11) that no row references any more. */
export interface UnpinnedBackendSession {
  /** The server and the identity the session was opened with. */
  readonly server: string;
  readonly serverIdentity: string;
  /** The backend's `Mcp-Session-Id`. */
  readonly backendSessionId: string;
}

/** Storage of {@link StoredTask}s; see the file comment. */
/**
 * What a pending slot becomes: the backend's task (its id, and a legacy backend's session), or a
 * task the broker made itself holding the backend's immediate result (§2.12.3).
 */
export type TaskActivation =
  | { readonly backendTaskId: string; readonly backendSessionId?: string }
  | { readonly heldResult: string };

export interface TaskStore {
  /**
   * Inserts `slot` as `pending` unless its person already has `bounds.perPerson` unexpired open
   * tasks at `now` (then `false`, nothing written); count and insert are atomic across replicas.
   * The slot expires at `expiresAt` unless {@link TaskStore.activate}d before.
   */
  reserve(slot: TaskSlot, bounds: TaskBounds, now: number, expiresAt: number): Promise<boolean>;
  /**
   * Turns the pending slot `taskId` into the task the backend created; its expiry becomes
   * `recordedAt + state.ttlMs`. Returns the row, or undefined when there is no pending slot of
   * that id any more (swept: the caller must not hand the id out).
   */
  activate(
    taskId: string,
    backend: TaskActivation,
    state: TaskState,
  ): Promise<StoredTask | undefined>;
  /** Deletes the pending slot `taskId` (the backend answered without a task). */
  release(taskId: string): Promise<void>;
  /** The row of `taskId`, expired or not; undefined when there is none. */
  get(taskId: string): Promise<StoredTask | undefined>;
  /**
   * Writes `state` over the row of `taskId` if its version is still `version` (then increments
   * it and recomputes the expiry from the ttl); true when this call wrote.
   */
  observe(taskId: string, version: number, state: TaskState): Promise<boolean>;
  /**
   * The person's unexpired, non-pending tasks at `now`, newest first (`recordedAt` then
   * `taskId`, both descending), after `after` when given, at most `limit` when given.
   */
  listOf(
    principal: string,
    now: number,
    options?: { after?: TaskListPosition; limit?: number },
  ): Promise<StoredTask[]>;
  /** How many unexpired open tasks the person has at `now`. */
  countOpen(principal: string, now: number): Promise<number>;
  /** Deletes the row of `taskId`. */
  delete(taskId: string): Promise<void>;
  /**
   * Deletes every row of the server `server` made under `serverIdentity` (the server was removed,
   * or replaced by another under its name: its ids answer "Task not found" from now on).
   */
  deleteOfServer(server: string, serverIdentity: string): Promise<void>;
  /**
   * Records `replacement` as the backend session of every row of `owner`'s person at `owner`'s
   * server that names `forgotten` (a pinned session the backend forgot, replaced, contract
   * §2.11). Backends choose session ids: another server's, or another person's, rows never move.
   */
  replaceBackendSession(
    owner: Pick<StoredTask, 'principal' | 'server' | 'serverIdentity'>,
    forgotten: string,
    replacement: string,
  ): Promise<void>;
  /** Whether an unexpired row at `now` references the backend session (it must not be ended). */
  pinsBackendSession(backendSessionId: string, now: number): Promise<boolean>;
  /**
   * Deletes rows that expired at or before `now`, slots that never became tasks included. Returns
   * the backend sessions that rows deleted by this very call referenced and that no row (expired
   * or not) references afterwards: of replicas sweeping at once, the last to delete such a
   * session's rows sees it unreferenced (two may both see it: its DELETE is best effort).
   */
  deleteExpired(now: number): Promise<UnpinnedBackendSession[]>;
  /**
   * Takes or renews the watcher's lease of `taskId` for `holder` until `until` (contract §2.10):
   * only while the task is open (`working`, `input_required`: an ended task is not watched) and
   * nobody holds the lease, `holder` already does, or the holder's lease ran out by `now` (one
   * conditional write: of two replicas asking at once, one gets it). True when `holder` holds it
   * now.
   */
  takeLease(taskId: string, holder: string, now: number, until: number): Promise<boolean>;
  /** Gives up the lease of `taskId` if `holder` holds it (another replica's lease stays). */
  releaseLease(taskId: string, holder: string): Promise<void>;
  /**
   * The open (`working`, `input_required`), unexpired tasks of these people (of backends of
   * either era) whose lease nobody holds at `now` (free, or lapsed): what a replica where they
   * listen may take up (the watcher polls each through the relay of its backend's era). One
   * query for all of them.
   */
  unwatchedOf(principals: readonly string[], now: number): Promise<StoredTask[]>;
}
