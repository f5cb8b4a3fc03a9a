/*
 * The open input requests of tasks whose client and backend speak different eras
 * (docs/contracts/tasks-and-apps.md §2.4, §2.12.4): what a 2025-11-25 backend asked during a
 * task that a 2026-07-28 client is shown as `inputRequests` and answers with `tasks/update`.
 * They belong to a person and a task, not to a client session, and live as long as the task (a
 * task may wait hours for a person), in the one table of gateway ids (`mcp_broker_elicitations`,
 * store/DatabaseTaskInputStore.ts) or, with `sessionStore: memory`, in this replica's memory.
 *
 * Guarantees: an input is answered at most once — `claim` removes it atomically, and only for
 * its task's owner; a claim of another task's or person's input, or of an expired one, changes
 * nothing. Expired inputs are swept with the task rows (`deleteExpired`).
 */
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';

/** One request a backend asked during a task, waiting for its answer. */
export interface TaskInput {
  /** The key the client sees in `inputRequests` (a gateway id, `<server>:<random>`). */
  readonly gatewayId: string;
  /** The broker task id. */
  readonly taskId: string;
  /** The task's owner: only they may answer. */
  readonly principal: string;
  /** The task's configured server name. */
  readonly server: string;
  /** The backend session that asked (the task's pinned session). */
  readonly backendSessionId: string | undefined;
  /** That session's protocol version. */
  readonly protocolVersion: string;
  /** The backend's request id, as its exact JSON token. */
  readonly backendRequestId: RawJsonRpcId;
  /** The input request as clients are shown it (`method`, `params`). */
  readonly request: Readonly<Record<string, unknown>>;
  /** Epoch ms: the task's expiry. */
  readonly expiresAt: number;
}

/** Storage of {@link TaskInput}s; see the file comment. */
export interface TaskInputStore {
  /** Records an input the backend asked; its gateway id is new (the caller made it). */
  insert(input: TaskInput): Promise<void>;
  /** The task's unanswered, unexpired inputs at `now`. */
  openOf(taskId: string, now: number): Promise<TaskInput[]>;
  /**
   * Removes and returns input `gatewayId` if it is one of `taskId`'s, owned by `principal` and
   * unexpired at `now`; otherwise undefined, and nothing changes.
   */
  claim(
    gatewayId: string,
    taskId: string,
    principal: string,
    now: number,
  ): Promise<TaskInput | undefined>;
  /** Removes the inputs expired at `now`. */
  deleteExpired(now: number): Promise<void>;
}

/** The single-process {@link TaskInputStore}. */
export class MemoryTaskInputStore implements TaskInputStore {
  private readonly inputs = new Map<string, TaskInput>();

  async insert(input: TaskInput): Promise<void> {
    this.inputs.set(input.gatewayId, input);
  }

  async openOf(taskId: string, now: number): Promise<TaskInput[]> {
    return [...this.inputs.values()].filter(i => i.taskId === taskId && i.expiresAt > now);
  }

  async claim(gatewayId: string, taskId: string, principal: string, now: number) {
    // Check and delete in one synchronous step: atomic in one process.
    const input = this.inputs.get(gatewayId);
    if (
      input === undefined ||
      input.taskId !== taskId ||
      input.principal !== principal ||
      input.expiresAt <= now
    ) {
      return undefined;
    }
    this.inputs.delete(gatewayId);
    return input;
  }

  async deleteExpired(now: number): Promise<void> {
    for (const [id, input] of this.inputs) if (input.expiresAt <= now) this.inputs.delete(id);
  }
}
