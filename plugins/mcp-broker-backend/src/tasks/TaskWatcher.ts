/*
 * The watcher of one replica (docs/contracts/tasks-and-apps.md §2.10 "The watcher"): polls the
 * open tasks of the people who listen here, one replica per task.
 *
 * A person listens here while they have a subscriber on this replica (a legacy GET stream of any
 * of their sessions: `subscribe`); a 2026-07-28 listen stream subscribes only to the tasks its
 * acknowledgement agreed to (`subscribeTo`). For each task wanted the replica takes the task's
 * lease in the shared row (TaskStore.takeLease: free, its own, or lapsed) and, while it holds
 * it, polls the backend with `tasks/get` every max(the task's pollInterval,
 * `mcpBroker.tasks.minPollInterval`); a replica that finds the lease held leaves the task to its
 * holder. Leases are renewed every TASK_LEASE_RENEW_MS and lapse TASK_LEASE_MS after their
 * holder stops, when another replica with subscribers takes over at its next renewal (which
 * also finds tasks started elsewhere). A lease is given up when the task ends, is gone, or its
 * person's last subscriber here goes. What a poll shows is an observation of the row (the relay
 * writes and publishes changes); the watcher only decides who polls and when.
 *
 * Failure modes: a failed poll (backend down, timeout) is logged once per task until a poll
 * succeeds, and polled again at the next interval; a failed lease write is logged and tried again
 * at the next renewal (the lease lapses meanwhile, and another replica may take it).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { isTerminalStatus, type StoredTask, type TaskStore } from './TaskStore';

/** How long a lease lasts unrenewed (a stopped holder's tasks are taken over after this). */
export const TASK_LEASE_MS = 30_000;
/** How often a holder renews its leases (and a replica with subscribers looks for unheld tasks). */
export const TASK_LEASE_RENEW_MS = 10_000;

/** Options of {@link TaskWatcher}. */
export interface TaskWatcherOptions {
  store: TaskStore;
  /**
   * Reads the task's state from its backend into its row (through the relay of its backend's
   * era): the row afterwards, undefined when the task is gone. May throw (the backend failed).
   */
  poll: (taskId: string, signal: AbortSignal) => Promise<StoredTask | undefined>;
  /** This replica's id, the lease holder it writes. */
  holder: string;
  /** `mcpBroker.tasks.minPollInterval`. */
  minPollIntervalMs: number;
  logger: LoggerService;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
}

/** A task this replica holds the lease of and polls. */
interface Watched {
  readonly taskId: string;
  readonly principal: string;
  readonly stop: AbortController;
  timer?: NodeJS.Timeout;
  failing: boolean;
}

/** See the file comment. */
export class TaskWatcher {
  /** Local subscribers per person. */
  private readonly subscribers = new Map<string, number>();
  /** Local subscribers per task (listen streams), with the task's person. */
  private readonly taskSubscribers = new Map<string, { principal: string; count: number }>();
  private readonly watched = new Map<string, Watched>();
  /** Tasks whose lease is being taken here (a second attempt waits for none). */
  private readonly taking = new Set<string>();
  private readonly now: () => number;
  private renewal: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: TaskWatcherOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Whether this replica watches task `taskId` now (it holds the task's lease for that). */
  watches(taskId: string): boolean {
    return this.watched.has(taskId);
  }

  /** How many tasks this replica holds the lease of (`mcp_broker.tasks.watched`). */
  get size(): number {
    return this.watched.size;
  }

  /**
   * A subscriber of `principal`'s tasks came to this replica: their open tasks are watched
   * (those nobody else watches). Returns the function that says it went (call it once).
   */
  subscribe(principal: string): () => void {
    const count = this.subscribers.get(principal) ?? 0;
    this.subscribers.set(principal, count + 1);
    if (count === 0) void this.scan([principal]);
    this.scheduleRenewal();
    let gone = false;
    return () => {
      if (gone) return;
      gone = true;
      const left = this.subscribers.get(principal)! - 1;
      if (left > 0) {
        this.subscribers.set(principal, left);
        return;
      }
      this.subscribers.delete(principal);
      for (const watched of [...this.watched.values()]) {
        if (!this.wanted(watched.principal, watched.taskId)) void this.drop(watched.taskId);
      }
      this.stopRenewalIfIdle();
    };
  }

  /**
   * A listen stream of `principal` agreed to `taskIds`: those of them open are watched (if
   * nobody else watches them). Returns the function that says it went (call it once).
   */
  subscribeTo(principal: string, taskIds: ReadonlySet<string>): () => void {
    for (const taskId of taskIds) {
      const subscribed = this.taskSubscribers.get(taskId);
      if (subscribed === undefined) this.taskSubscribers.set(taskId, { principal, count: 1 });
      else subscribed.count += 1;
      void this.watch(principal, taskId, undefined);
    }
    if (taskIds.size > 0) this.scheduleRenewal();
    let gone = false;
    return () => {
      if (gone) return;
      gone = true;
      for (const taskId of taskIds) {
        const subscribed = this.taskSubscribers.get(taskId);
        if (subscribed === undefined) continue;
        subscribed.count -= 1;
        if (subscribed.count > 0) continue;
        this.taskSubscribers.delete(taskId);
        if (this.watched.has(taskId) && !this.wanted(principal, taskId)) void this.drop(taskId);
      }
      this.stopRenewalIfIdle();
    };
  }

  /**
   * A task of `principal` changed to `status` (a signal): an open one is watched if nobody
   * here does yet and someone listens here; an ended one is no longer polled.
   */
  changed(
    principal: string,
    taskId: string,
    status: StoredTask['status'],
    pollIntervalMs?: number,
  ): void {
    if (isTerminalStatus(status)) void this.ended(taskId);
    else void this.watch(principal, taskId, pollIntervalMs);
  }

  /** Stops every poll and gives up every lease (shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.renewal);
    this.renewal = undefined;
    await Promise.all([...this.watched.keys()].map(taskId => this.drop(taskId)));
  }

  /** Whether a local subscriber wants `taskId` of `principal` watched. */
  private wanted(principal: string, taskId: string): boolean {
    return this.subscribers.has(principal) || this.taskSubscribers.has(taskId);
  }

  private stopRenewalIfIdle(): void {
    if (this.subscribers.size > 0 || this.taskSubscribers.size > 0) return;
    clearInterval(this.renewal);
    this.renewal = undefined;
  }

  private scheduleRenewal(): void {
    if (this.renewal !== undefined || this.closed) return;
    this.renewal = setInterval(() => void this.renew(), TASK_LEASE_RENEW_MS);
    this.renewal.unref();
  }

  /** Renews the leases held here, and looks for the listeners' tasks nobody holds. */
  private async renew(): Promise<void> {
    const now = this.now();
    for (const watched of [...this.watched.values()]) {
      let held: boolean;
      try {
        held = await this.options.store.takeLease(
          watched.taskId,
          this.options.holder,
          now,
          now + TASK_LEASE_MS,
        );
      } catch (error) {
        this.options.logger.warn(`MCP broker: could not renew a task's watcher lease: ${error}`);
        continue;
      }
      // Another replica took it over (this one counted as gone), or the row went.
      if (!held) this.stopPolling(watched);
    }
    await this.scan([...this.subscribers.keys()]);
    // The listen streams' tasks nobody here watches (held elsewhere, or taken over now).
    await Promise.all(
      [...this.taskSubscribers].map(([taskId, { principal }]) =>
        this.watch(principal, taskId, undefined),
      ),
    );
  }

  /** Watches every open task of `principals` that nobody watches (one query for them all). */
  private async scan(principals: readonly string[]): Promise<void> {
    if (principals.length === 0) return;
    let tasks: StoredTask[];
    try {
      tasks = await this.options.store.unwatchedOf(principals, this.now());
    } catch (error) {
      this.options.logger.warn(`MCP broker: could not read the tasks to watch: ${error}`);
      return;
    }
    await Promise.all(
      tasks.map(task => this.watch(task.principal, task.taskId, task.pollIntervalMs)),
    );
  }

  /**
   * Takes the lease of `taskId` and polls it from one interval on (its state as last seen is
   * in its row), unless it is held here or elsewhere, or unwanted.
   */
  private async watch(principal: string, taskId: string, pollIntervalMs?: number): Promise<void> {
    if (
      this.closed ||
      !this.wanted(principal, taskId) ||
      this.watched.has(taskId) ||
      this.taking.has(taskId)
    ) {
      return;
    }
    this.taking.add(taskId);
    const { store, holder } = this.options;
    try {
      const now = this.now();
      if (!(await store.takeLease(taskId, holder, now, now + TASK_LEASE_MS))) {
        await this.forgetIfEnded(taskId);
        return;
      }
      if (this.closed || !this.wanted(principal, taskId)) {
        // The last subscriber went meanwhile.
        await store.releaseLease(taskId, holder);
        return;
      }
      const watched: Watched = { taskId, principal, stop: new AbortController(), failing: false };
      this.watched.set(taskId, watched);
      this.next(watched, pollIntervalMs);
    } catch (error) {
      this.options.logger.warn(`MCP broker: could not take a task's watcher lease: ${error}`);
    } finally {
      this.taking.delete(taskId);
    }
  }

  /**
   * A listen stream's task whose lease cannot be taken because it has ended or is gone (a listen
   * may agree to an ended task) is not tried again at every renewal.
   */
  private async forgetIfEnded(taskId: string): Promise<void> {
    if (!this.taskSubscribers.has(taskId)) return;
    const row = await this.options.store.get(taskId);
    if (row === undefined || isTerminalStatus(row.status)) this.taskSubscribers.delete(taskId);
  }

  /** One poll, then the next one after the task's interval (or the end of the watch). */
  private async poll(watched: Watched): Promise<void> {
    let row: StoredTask | undefined;
    try {
      row = await this.options.poll(watched.taskId, watched.stop.signal);
      if (watched.failing) {
        watched.failing = false;
        this.options.logger.info('MCP broker: polling a watched task works again');
      }
    } catch (error) {
      if (watched.stop.signal.aborted) return;
      if (!watched.failing) {
        this.options.logger.warn(
          `MCP broker: could not poll a watched task (retrying at its next interval): ${error}`,
        );
      }
      watched.failing = true;
      this.next(watched, undefined);
      return;
    }
    if (row === undefined || isTerminalStatus(row.status)) {
      await this.ended(watched.taskId);
      return;
    }
    this.next(watched, row.pollIntervalMs);
  }

  private next(watched: Watched, pollIntervalMs: number | undefined): void {
    if (this.watched.get(watched.taskId) !== watched || watched.stop.signal.aborted) return;
    const delay = Math.max(pollIntervalMs ?? 0, this.options.minPollIntervalMs);
    watched.timer = setTimeout(() => void this.poll(watched), delay);
    watched.timer.unref();
  }

  /**
   * `taskId` ended or is gone: no longer polled here, and no longer looked for at each renewal
   * for the listen streams that agreed to it (nothing of it will change again).
   */
  private async ended(taskId: string): Promise<void> {
    this.taskSubscribers.delete(taskId);
    this.stopRenewalIfIdle();
    await this.drop(taskId);
  }

  /** Stops polling `taskId` here and gives up its lease. */
  private async drop(taskId: string): Promise<void> {
    const watched = this.watched.get(taskId);
    if (watched === undefined) return;
    this.stopPolling(watched);
    try {
      await this.options.store.releaseLease(taskId, this.options.holder);
    } catch (error) {
      // It lapses by itself after TASK_LEASE_MS.
      this.options.logger.warn(`MCP broker: could not give up a task's watcher lease: ${error}`);
    }
  }

  private stopPolling(watched: Watched): void {
    if (this.watched.get(watched.taskId) === watched) this.watched.delete(watched.taskId);
    clearTimeout(watched.timer);
    watched.stop.abort();
  }
}
