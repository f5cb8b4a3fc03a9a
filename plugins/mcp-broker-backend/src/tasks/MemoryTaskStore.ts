/*
 * The single-replica TaskStore (`mcpBroker.sessionStore: memory`): the same records and rules as
 * the database's, in this process. Every method checks and changes in one synchronous step, which
 * is atomic in one process.
 */
import {
  OPEN_TASK_STATUSES,
  type StoredTask,
  type TaskBounds,
  type TaskListPosition,
  type TaskSlot,
  type TaskActivation,
  type TaskState,
  type TaskStore,
  WATCHED_TASK_STATUSES,
  type UnpinnedBackendSession,
} from './TaskStore';
import { compareNewestFirst, stateFields, trimRetained } from './taskRows';

/** {@link TaskStore} of one replica. */
export class MemoryTaskStore implements TaskStore {
  private readonly tasks = new Map<string, StoredTask>();
  /** The watchers' leases, by task id (kept apart from the rows: they are not the task's state). */
  private readonly leases = new Map<string, { holder: string; until: number }>();

  async reserve(slot: TaskSlot, bounds: TaskBounds, now: number, expiresAt: number) {
    if (this.openOf(slot.principal, now) >= bounds.perPerson) return false;
    this.tasks.set(slot.taskId, {
      ...slot,
      status: 'pending',
      recordedAt: now,
      expiresAt,
      version: 0,
    });
    const rows = [...this.tasks.values()].filter(task => task.principal === slot.principal);
    for (const taskId of trimRetained(rows, bounds.retained)) this.tasks.delete(taskId);
    return true;
  }

  async activate(taskId: string, backend: TaskActivation, state: TaskState) {
    const slot = this.tasks.get(taskId);
    if (slot === undefined || slot.status !== 'pending') return undefined;
    const task: StoredTask = {
      ...slot,
      ...backend,
      ...stateFields(slot.recordedAt, state),
      version: slot.version + 1,
    };
    this.tasks.set(taskId, task);
    return task;
  }

  async release(taskId: string) {
    if (this.tasks.get(taskId)?.status === 'pending') this.tasks.delete(taskId);
  }

  async get(taskId: string) {
    return this.tasks.get(taskId);
  }

  async observe(taskId: string, version: number, state: TaskState) {
    const task = this.tasks.get(taskId);
    if (task === undefined || task.version !== version || task.status === 'pending') return false;
    this.tasks.set(taskId, {
      ...task,
      ...stateFields(task.recordedAt, state),
      version: version + 1,
    });
    return true;
  }

  async listOf(
    principal: string,
    now: number,
    options: { after?: TaskListPosition; limit?: number } = {},
  ) {
    const { after, limit } = options;
    const rows = [...this.tasks.values()]
      .filter(
        task =>
          task.principal === principal &&
          task.status !== 'pending' &&
          task.expiresAt > now &&
          (after === undefined || compareNewestFirst(task, after) > 0),
      )
      .sort(compareNewestFirst);
    return limit === undefined ? rows : rows.slice(0, limit);
  }

  async countOpen(principal: string, now: number) {
    return this.openOf(principal, now);
  }

  async delete(taskId: string) {
    this.tasks.delete(taskId);
    this.leases.delete(taskId);
  }

  async deleteOfServer(server: string, serverIdentity: string) {
    for (const [taskId, task] of this.tasks) {
      if (task.server === server && task.serverIdentity === serverIdentity)
        this.tasks.delete(taskId);
    }
  }

  async replaceBackendSession(
    owner: Pick<StoredTask, 'principal' | 'server' | 'serverIdentity'>,
    forgotten: string,
    replacement: string,
  ) {
    for (const [taskId, task] of this.tasks) {
      if (
        task.backendSessionId === forgotten &&
        task.principal === owner.principal &&
        task.server === owner.server &&
        task.serverIdentity === owner.serverIdentity
      ) {
        this.tasks.set(taskId, { ...task, backendSessionId: replacement });
      }
    }
  }

  async pinsBackendSession(backendSessionId: string, now: number) {
    for (const task of this.tasks.values()) {
      if (task.backendSessionId === backendSessionId && task.expiresAt > now) return true;
    }
    return false;
  }

  async deleteExpired(now: number) {
    const freed = new Map<string, UnpinnedBackendSession>();
    for (const [taskId, task] of this.tasks) {
      if (task.expiresAt > now) continue;
      this.tasks.delete(taskId);
      this.leases.delete(taskId);
      const { server, serverIdentity, backendSessionId } = task;
      if (backendSessionId !== undefined) {
        freed.set(backendSessionId, { server, serverIdentity, backendSessionId });
      }
    }
    for (const task of this.tasks.values()) {
      if (task.backendSessionId !== undefined) freed.delete(task.backendSessionId);
    }
    return [...freed.values()];
  }

  async takeLease(taskId: string, holder: string, now: number, until: number) {
    const task = this.tasks.get(taskId);
    if (task === undefined || !WATCHED_TASK_STATUSES.includes(task.status)) return false;
    const lease = this.leases.get(taskId);
    if (lease !== undefined && lease.holder !== holder && lease.until >= now) return false;
    this.leases.set(taskId, { holder, until });
    return true;
  }

  async releaseLease(taskId: string, holder: string) {
    if (this.leases.get(taskId)?.holder === holder) this.leases.delete(taskId);
  }

  async unwatchedOf(principals: readonly string[], now: number) {
    const people = new Set(principals);
    return [...this.tasks.values()].filter(task => {
      const lease = this.leases.get(task.taskId);
      return (
        people.has(task.principal) &&
        WATCHED_TASK_STATUSES.includes(task.status) &&
        task.expiresAt > now &&
        (lease === undefined || lease.until < now)
      );
    });
  }

  private openOf(principal: string, now: number): number {
    let open = 0;
    for (const task of this.tasks.values()) {
      if (
        task.principal === principal &&
        task.expiresAt > now &&
        OPEN_TASK_STATUSES.includes(task.status)
      ) {
        open += 1;
      }
    }
    return open;
  }
}
