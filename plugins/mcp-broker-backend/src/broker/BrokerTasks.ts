/*
 * BrokerTasks: the broker's task machinery, built and wired in one place
 * (docs/contracts/tasks-and-apps.md §2): the task relays of both eras and of their mixes
 * (LegacyTaskRelay, ModernTaskRelay, CrossEraTaskRelay), the input relay of a legacy backend's
 * tasks for 2026-07-28 clients and its store (LegacyInputRelay, TaskInputStore), the watcher of
 * the tasks and their status notifications (TaskWatcher, TaskNotifications) with the bus they
 * travel on between replicas, and the sweep of expired tasks. Every task change this replica
 * writes is audited (`ended`, once) and published here. McpBroker holds one and reaches the
 * backends through its connections; it drains and closes it with itself.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerConfig } from '../config';
import type { BackendConnection } from '../backend/BackendConnection';
import type { AuditedTaskOperation, TaskAuditor } from '../tasks/TaskAuditor';
import type { BrokerMetrics } from '../telemetry/BrokerMetrics';
import { LegacyTaskRelay } from '../tasks/LegacyTaskRelay';
import { ModernTaskRelay } from '../tasks/ModernTaskRelay';
import { CrossEraTaskRelay } from '../tasks/CrossEraTaskRelay';
import { ElicitationIdMap, type ElicitationIdStore } from '../calls/ElicitationIdMap';
import { LegacyInputRelay } from '../tasks/LegacyInputRelay';
import { MemoryTaskInputStore, type TaskInputStore } from '../tasks/TaskInputStore';
import type { UrlElicitationPolicy } from '../calls/urlElicitations';
import { ExpirySweeper } from '../replicas/ExpirySweeper';
import { MemoryTaskStore } from '../tasks/MemoryTaskStore';
import { serverIdentityOf } from '../identity/serverIdentity';
import { isTerminalStatus, type TaskStore } from '../tasks/TaskStore';
import { TaskNotifications } from '../tasks/TaskNotifications';
import { TaskWatcher } from '../tasks/TaskWatcher';
import type { ObservedChange } from '../tasks/observeTaskState';
import { SignalBus, type SignalStore } from '../replicas/SignalBus';
import { randomUUID } from 'node:crypto';

/**
 * The task table, the task audit and the task counters (docs/contracts/tasks-and-apps.md §2);
 * default: a table in memory (one replica), no audit, no counters. `signals` (the bus's table,
 * `sessionStore: database`) carries task status changes to every replica, and `replicaId`
 * names this replica as a task's watcher; without them the changes stay in this process and
 * the watcher's id is random.
 */
export interface BrokerTaskOptions {
  store: TaskStore;
  /** The open inputs of tasks carried across eras (§2.12.4); default in memory. */
  inputs?: TaskInputStore;
  auditor?: TaskAuditor;
  metrics?: BrokerMetrics;
  urlElicitations?: UrlElicitationPolicy;
  signals?: SignalStore;
  replicaId?: string;
  /** A task status notification was sent to a client stream (a metric). */
  onNotificationSent?: (era: 'legacy' | 'modern') => void;
  /** Where the gateway ids of task inputs live (shared by the replicas); default: memory. */
  elicitations?: ElicitationIdStore;
}

/** Options of {@link BrokerTasks}: the broker's own (McpBrokerOptions) it needs. */
export interface BrokerTasksOptions {
  config: BrokerConfig;
  logger: LoggerService;
  /** See {@link BrokerTaskOptions}. */
  tasks?: BrokerTaskOptions;
}

/** See the file comment. */
export class BrokerTasks {
  /** Long-running tasks of 2025-11-25 clients and backends (contract tasks-and-apps §2). */
  readonly tasks: LegacyTaskRelay;
  /** Long-running tasks of 2026-07-28 clients and backends (contract tasks-and-apps §2.12.2). */
  readonly modernTasks: ModernTaskRelay;
  /** The shared task table (contract §2.4). */
  readonly taskStore: TaskStore;
  /** Task status changes to this replica's client streams (contract tasks-and-apps §2.10). */
  readonly taskNotifications: TaskNotifications;
  /** Polls the open tasks of the people listening here, one replica per task (§2.10). */
  private readonly taskWatcher: TaskWatcher;
  /** Reads a legacy backend's task input for 2026-07-28 clients (§2.12.4); stopped at the drain. */
  private readonly taskInput: LegacyInputRelay;
  /** The bus task status changes travel on (`sessionStore: database`), stopped on close. */
  private readonly taskBus: SignalBus | undefined;
  /**
   * Tasks of 2026-07-28 clients whatever their backend's era (contract tasks-and-apps §2.12.4;
   * a modern backend's tasks go on to {@link BrokerTasks.modernTasks}).
   */
  readonly crossEraTasks: CrossEraTaskRelay;
  /** Expired task rows, and the DELETE of pinned backend sessions they were the last users of. */
  private readonly taskSweep: ExpirySweeper;

  /** `connections`: the broker's live backends by name (they change at runtime). */
  constructor(
    private readonly options: BrokerTasksOptions,
    private readonly connections: ReadonlyMap<string, BackendConnection>,
  ) {
    const taskStore = options.tasks?.store ?? new MemoryTaskStore();
    this.taskStore = taskStore;
    const legacyTaskBackendOf = (name: string) => {
      const connection = this.connections.get(name);
      return (
        connection && {
          server: connection.backend,
          channel: connection.legacy,
          supportsTaskCalls: connection.supportsTaskCalls,
        }
      );
    };
    this.tasks = new LegacyTaskRelay({
      store: taskStore,
      onObserved: change => this.taskObserved(change),
      config: options.config.tasks,
      toolCallTimeoutMs: options.config.toolCallTimeoutMs,
      backendOf: legacyTaskBackendOf,
      ...(options.tasks?.auditor === undefined ? {} : { auditor: options.tasks.auditor }),
      ...(options.tasks?.metrics === undefined ? {} : { metrics: options.tasks.metrics }),
      urlElicitations: options.tasks?.urlElicitations,
    });
    this.modernTasks = new ModernTaskRelay({
      store: taskStore,
      // A 2026-07-28 task's end is counted here (the legacy relay counts its own), audited and
      // published like a legacy task's changes.
      onObserved: async change => {
        if (!isTerminalStatus(change.before.status) && isTerminalStatus(change.after.status)) {
          options.tasks?.metrics?.taskEnded(change.after.server, change.after.status);
        }
        await this.taskObserved(change);
      },
      config: options.config.tasks,
      toolCallTimeoutMs: options.config.toolCallTimeoutMs,
      logger: options.logger,
      backendOf: name => {
        const connection = this.connections.get(name);
        return (
          connection && {
            server: connection.backend,
            channel: connection.modern,
            supportsTasks: connection.supportsTaskExtension,
          }
        );
      },
      ...(options.tasks?.auditor === undefined ? {} : { auditor: options.tasks.auditor }),
      ...(options.tasks?.urlElicitations === undefined
        ? {}
        : { urlElicitations: options.tasks.urlElicitations }),
    });
    const taskInputs = options.tasks?.inputs ?? new MemoryTaskInputStore();
    const holder = options.tasks?.replicaId ?? randomUUID();
    this.taskInput = new LegacyInputRelay({
      store: taskStore,
      inputs: taskInputs,
      legacy: this.tasks,
      holder,
      // One holder id for both: a reading's end leaves the watcher's lease held.
      watching: taskId => this.taskWatcher.watches(taskId),
      logger: options.logger,
      urlElicitations: options.tasks?.urlElicitations,
    });
    this.taskWatcher = new TaskWatcher({
      store: taskStore,
      // Through the relay of the task's backend era (no 2025 request to a 2026 backend).
      poll: async (taskId, signal) =>
        (await taskStore.get(taskId))?.backendEra === 'modern'
          ? this.modernTasks.poll(taskId, signal)
          : this.tasks.poll(taskId, signal),
      holder,
      minPollIntervalMs: options.config.tasks.minPollIntervalMs,
      logger: options.logger,
    });
    const signals = options.tasks?.signals;
    this.taskBus = signals && new SignalBus({ store: signals, logger: options.logger });
    this.taskNotifications = new TaskNotifications({
      bus: this.taskBus,
      identityOf: name => {
        const connection = this.connections.get(name);
        return connection && serverIdentityOf(connection.backend);
      },
      logger: options.logger,
      onSent: options.tasks?.onNotificationSent,
      onListening: principal => this.taskWatcher.subscribe(principal),
      onListeningTo: (principal, taskIds) => this.taskWatcher.subscribeTo(principal, taskIds),
      onSignal: (principal, signal) =>
        this.taskWatcher.changed(
          principal,
          signal.task.taskId,
          signal.legacyStatus,
          signal.task.pollIntervalMs,
        ),
    });
    this.taskSweep = new ExpirySweeper([this.tasks, taskInputs], error =>
      options.logger.warn(`Could not sweep expired MCP tasks: ${error}`),
    );
    this.taskSweep.start();
    this.crossEraTasks = new CrossEraTaskRelay({
      store: taskStore,
      config: options.config.tasks,
      legacy: this.tasks,
      modern: this.modernTasks,
      legacyBackendOf: legacyTaskBackendOf,
      input: this.taskInput,
      ...(options.tasks?.auditor === undefined ? {} : { auditor: options.tasks.auditor }),
      inputs: {
        elicitations: new ElicitationIdMap({
          store: options.tasks?.elicitations,
          ttlMs: options.config.elicitationTtlMs,
        }),
        requestTimeoutMs: options.config.requestTimeoutMs,
      },
    });
  }

  /** Shutdown begins: the input relay of 2026-07-28 clients' legacy tasks stops (§2.12.4). */
  stopInput(): void {
    this.taskInput.stop();
  }

  /** The task requests in flight may finish until `timeoutMs`, then are cut (§2.7). */
  drain(timeoutMs: number): Promise<void> {
    return this.tasks.drain(timeoutMs);
  }

  /** How many tasks this replica watches (holds the lease of, contract tasks-and-apps §2.10). */
  get tasksWatched(): number {
    return this.taskWatcher.size;
  }

  /**
   * Stops the sweep, the watcher (it awaits giving up its leases), the notifications and their
   * bus; after the drain.
   */
  async close(): Promise<void> {
    this.taskSweep.stop();
    // The watcher first: it awaits giving up its leases (another replica may take the tasks
    // at once); closing the notifications would drop them without waiting.
    await this.taskWatcher.close();
    this.taskNotifications.close();
    await this.taskBus?.stop();
  }

  /**
   * A task change this replica wrote: audited `ended` when it is the task's end (once: only the
   * compare-and-set winner gets here), and published to the owner's streams on every replica.
   */
  private async taskObserved(change: ObservedChange): Promise<void> {
    await this.auditTaskEnd(change);
    await this.taskNotifications.publish(change.after, change.finalPayload);
  }

  /** Records one `mcp-broker.task` audit event (§2.14), when task auditing is on. */
  async auditTaskOperation(operation: AuditedTaskOperation): Promise<void> {
    await this.options.tasks?.auditor?.record(operation);
  }

  /** A task's end, audited once: by the replica whose observation wrote it (§2.14 `ended`). */
  private async auditTaskEnd({ before, after }: ObservedChange): Promise<void> {
    if (!isTerminalStatus(before.status) && isTerminalStatus(after.status)) {
      await this.options.tasks?.auditor?.record({
        principal: after.principal,
        operation: 'ended',
        outcome: 'succeeded',
        server: after.server,
        tool: after.tool,
        taskId: after.taskId,
        status: after.status,
        ageMs: Date.now() - after.recordedAt,
        durationMs: 0,
      });
    }
  }
}
