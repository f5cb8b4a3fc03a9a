/*
 * The legacy tasks fixture's task store (tasksServer.ts): the SDK's InMemoryTaskStore, whose
 * tasks belong to the session that created them, plus what a server with durable tasks does when
 * it restarts — its sessions are gone, its tasks are not: `survive()` frees every task created so
 * far from its session, so any session (of the same credential: tasksServer checks it) reaches
 * it afterwards; `lose()` is a restart without them: every task created so far is unknown from
 * then on.
 */
import type { TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/interfaces.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';

/** A session id no session has (the lookups of lost tasks name it). */
const LOST_SESSION = '\u0000lost';

/** See the file comment. */
export class SurvivingTaskStore implements TaskStore {
  private readonly inner = new InMemoryTaskStore();
  private readonly created: string[] = [];
  private readonly survivors = new Set<string>();
  private readonly lost = new Set<string>();

  /** Every task created so far is reachable from any session from now on. */
  survive(): void {
    for (const taskId of this.created) this.survivors.add(taskId);
  }

  /** Every task created so far is unknown from now on, to every session. */
  lose(): void {
    for (const taskId of this.created) this.lost.add(taskId);
  }

  /** Stops the inner store's expiry timers. */
  cleanup(): void {
    this.inner.cleanup();
  }

  async createTask(...args: Parameters<TaskStore['createTask']>) {
    const task = await this.inner.createTask(...args);
    this.created.push(task.taskId);
    return task;
  }

  getTask(taskId: string, sessionId?: string) {
    return this.inner.getTask(taskId, this.sessionOf(taskId, sessionId));
  }

  storeTaskResult(
    ...[taskId, status, result, sessionId]: Parameters<TaskStore['storeTaskResult']>
  ) {
    return this.inner.storeTaskResult(taskId, status, result, this.sessionOf(taskId, sessionId));
  }

  getTaskResult(taskId: string, sessionId?: string) {
    return this.inner.getTaskResult(taskId, this.sessionOf(taskId, sessionId));
  }

  updateTaskStatus(
    ...[taskId, status, message, sessionId]: Parameters<TaskStore['updateTaskStatus']>
  ) {
    return this.inner.updateTaskStatus(taskId, status, message, this.sessionOf(taskId, sessionId));
  }

  listTasks(cursor?: string, sessionId?: string) {
    return this.inner.listTasks(cursor, sessionId);
  }

  /**
   * The session a lookup of `taskId` is made for: none (any) for a task that survived, one that
   * never exists for a lost one.
   */
  private sessionOf(taskId: string, sessionId: string | undefined): string | undefined {
    if (this.lost.has(taskId)) return LOST_SESSION;
    return this.survivors.has(taskId) ? undefined : sessionId;
  }
}
