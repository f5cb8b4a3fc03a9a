/*
 * Task status notifications of one replica (docs/contracts/tasks-and-apps.md §2.10 "Fan-out"):
 * publishing a task's change to every replica, and delivering it to this replica's streams of
 * the task's owner.
 *
 * - `publish`: the replica that wrote a change (the compare-and-set winner) sends it once, as a
 *   signal to the owner's address (taskStatusSignal.ts) on the bus between replicas
 *   (replicas/SignalBus.ts); not consumed, so every replica with the owner's streams reads it.
 *   With `sessionStore: memory` there is no bus: it is delivered in this process.
 * - `listen`: a stream of a person (legacy: a session's GET stream) hears of their tasks from
 *   now on. While a person has streams here, this replica waits on their address; it takes each
 *   change of a task once and in version order (the bus hands an unconsumed signal to every read
 *   while it lives, and two writers' signals may be read in either order: the newest version
 *   delivered per task is remembered, an older or repeated one dropped) and delivers it once per
 *   local stream, in order per stream, as `notifications/tasks/status` (a 2025-11-25 `Task` with the broker id,
 *   no result; a tool error is `failed`), after checking again that the task's server still has the task's identity and
 *   that the stream's person may use the task's tool (`mayUse`: the same cached decision as a
 *   `tools/call`; a decision that cannot be taken sends nothing). A stream opened after a change
 *   was published does not hear of it. A 2026-07-28 `subscriptions/listen` stream hears
 *   only of the task ids its acknowledgement agreed to, as `notifications/tasks` (the signal's
 *   `DetailedTask` — an ended task's `result` or `error` inlined —, tagged with its subscription
 *   id), after the same checks, unless the signal is over MAX_TASK_NOTIFICATION_BYTES (a large
 *   result: clients see the task with `tasks/get`); it subscribes to
 *   those tasks only (`onListeningTo`), not to all of its person's tasks.
 *
 * Failure modes: a signal that cannot be sent is logged, and the change is seen again by the
 * next observation of the task (nothing half-written: the row already holds it).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { JsonRpcId, JsonRpcMessage } from '../protocol/jsonRpc';
import type { LegacyTaskPayload } from '../protocol/taskEraMapping';
import type { Signal, SignalBus } from '../replicas/SignalBus';
import type { StoredTask } from './TaskStore';
import {
  legacyTaskStatusNotification,
  MAX_TASK_NOTIFICATION_BYTES,
  modernTaskNotification,
  parseTaskStatusSignal,
  TASK_SIGNAL_TTL_MS,
  taskSignalAddress,
  taskStatusSignalOf,
  type TaskStatusSignal,
} from './taskStatusSignal';

/** A client stream that hears of its person's tasks. */
export interface TaskStatusStream {
  /** Sends one message; false when the stream is closed. */
  send(message: JsonRpcMessage): boolean;
  readonly closed: boolean;
  /**
   * Whether the stream's person may use `tool` (the server's own name) of `server` now;
   * `toolAnnotations` (the task row's JSON) decide a tool the server no longer lists.
   */
  mayUse(server: string, tool: string, toolAnnotations?: string): Promise<boolean>;
}

/** What a 2026-07-28 listen stream agreed to hear (contract §2.10 "Listen filter"). */
export interface ListenTaskFilter {
  /** The listen request's JSON-RPC id, which tags every notification of the stream. */
  readonly subscriptionId: JsonRpcId;
  /** The task ids its acknowledgement agreed to. */
  readonly taskIds: ReadonlySet<string>;
}

/** Options of {@link TaskNotifications}. */
export interface TaskNotificationsOptions {
  /** The bus between replicas; absent with `sessionStore: memory` (one replica). */
  bus?: SignalBus;
  /** The identity digest of the server configured under `name` now, if any. */
  identityOf: (name: string) => string | undefined;
  logger: LoggerService;
  /**
   * A person's first legacy stream came here (it subscribes to all their tasks); returns the
   * function called when their last one goes.
   */
  onListening?: (principal: string) => () => void;
  /**
   * A listen stream agreed to these tasks of `principal`; returns the function called when it
   * goes.
   */
  onListeningTo?: (principal: string, taskIds: ReadonlySet<string>) => () => void;
  /** A signal of `principal`'s task was read here (before delivery). */
  onSignal?: (principal: string, signal: TaskStatusSignal) => void;
  /** A notification was sent to a stream of `era` (`mcp_broker.task_notifications.sent`). */
  onSent?: (era: 'legacy' | 'modern') => void;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
}

/** A stream registered with {@link TaskNotifications.listen}. */
interface Listening {
  readonly stream: TaskStatusStream;
  /** A 2026-07-28 listen stream's filter; absent for a legacy GET stream. */
  readonly modern?: ListenTaskFilter;
  /** When it began to listen (changes published before are not delivered). */
  readonly since: number;
  /** Deliveries to this stream, one after the other (order per task). */
  queue: Promise<void>;
}

/** A person's streams on this replica. */
interface Listener {
  readonly streams: Set<Listening>;
  /**
   * The newest version of each task delivered here, and when (each change is delivered once, in
   * version order; an older or repeated signal is dropped). Forgotten after signals expire.
   */
  readonly delivered: Map<string, { version: number; at: number }>;
  readonly stopWatching: () => void;
  /** The person's legacy streams here, and the end of their subscription to all tasks. */
  legacy: number;
  notListening?: () => void;
}

/** See the file comment. */
export class TaskNotifications {
  private readonly listeners = new Map<string, Listener>();
  private readonly now: () => number;

  constructor(private readonly options: TaskNotificationsOptions) {
    this.now = options.now ?? Date.now;
  }

  /**
   * Publishes `task`'s state as its row now holds it, with the final payload of a task that
   * ended when it was read (see the file comment).
   */
  async publish(task: StoredTask, finalPayload?: LegacyTaskPayload): Promise<void> {
    const signal = taskStatusSignalOf(task, this.now(), finalPayload);
    const payload = JSON.stringify(signal);
    const { bus } = this.options;
    if (bus === undefined) {
      this.receive(task.principal, signal, Buffer.byteLength(payload));
      return;
    }
    try {
      await bus.send(
        { address: taskSignalAddress(task.principal), kind: 'message', payload },
        TASK_SIGNAL_TTL_MS,
      );
    } catch (error) {
      this.options.logger.warn(`MCP broker: could not publish a task's status change: ${error}`);
    }
  }

  /**
   * `stream` of `principal` hears of their tasks' changes from now on (a listen stream: of the
   * tasks `modern` names), until the returned function is called (call it when the stream
   * closes).
   */
  listen(principal: string, stream: TaskStatusStream, modern?: ListenTaskFilter): () => void {
    let listener = this.listeners.get(principal);
    if (listener === undefined) {
      const stopWatching = this.options.bus?.watch(taskSignalAddress(principal), signal => {
        this.read(principal, signal);
        return false; // every replica with the person's streams reads it
      });
      listener = {
        streams: new Set(),
        delivered: new Map(),
        stopWatching: () => stopWatching?.(),
        legacy: 0,
      };
      this.listeners.set(principal, listener);
    }
    const listening: Listening = {
      stream,
      ...(modern === undefined ? {} : { modern }),
      since: this.now(),
      queue: Promise.resolve(),
    };
    listener.streams.add(listening);
    const own = listener;
    let notListeningTo: (() => void) | undefined;
    if (modern === undefined) {
      own.legacy += 1;
      if (own.legacy === 1) own.notListening = this.options.onListening?.(principal);
    } else {
      notListeningTo = this.options.onListeningTo?.(principal, modern.taskIds);
    }
    return () => {
      if (!own.streams.delete(listening)) return;
      notListeningTo?.();
      if (modern === undefined) {
        own.legacy -= 1;
        if (own.legacy === 0) {
          own.notListening?.();
          own.notListening = undefined;
        }
      }
      if (own.streams.size > 0) return;
      if (this.listeners.get(principal) === own) this.listeners.delete(principal);
      own.stopWatching();
    };
  }

  /** Stops listening everywhere (shutdown). */
  close(): void {
    for (const listener of this.listeners.values()) {
      listener.stopWatching();
      listener.notListening?.();
    }
    this.listeners.clear();
  }

  /** A bus signal to `principal`'s address (every live one, at every read). */
  private read(principal: string, signal: Signal): void {
    if (!this.listeners.has(principal)) return;
    const parsed = parseTaskStatusSignal(signal.payload);
    if (parsed !== undefined) {
      this.receive(principal, parsed, Buffer.byteLength(signal.payload ?? ''));
    }
  }

  /** Delivers one change to each of `principal`'s streams here (see the file comment). */
  private receive(principal: string, signal: TaskStatusSignal, bytes: number): void {
    const listener = this.listeners.get(principal);
    if (listener !== undefined && !this.isNews(listener, signal)) return;
    this.options.onSignal?.(principal, signal);
    if (listener === undefined) return;
    const legacy = legacyTaskStatusNotification(signal);
    for (const listening of listener.streams) {
      if (listening.since > signal.publishedAt) continue;
      const { modern } = listening;
      if (modern !== undefined && !modern.taskIds.has(signal.task.taskId)) continue;
      // Only a 2026-07-28 notification carries the (possibly large) inlined payload.
      if (modern !== undefined && bytes > MAX_TASK_NOTIFICATION_BYTES) continue;
      const message =
        modern === undefined ? legacy : modernTaskNotification(signal, modern.subscriptionId);
      listening.queue = listening.queue.then(() => this.deliver(listening, signal, message));
    }
  }

  /**
   * Whether `signal` is newer than what this replica delivered of its task (and records it): a
   * repeated read and an older change that came second are dropped.
   */
  private isNews(listener: Listener, signal: TaskStatusSignal): boolean {
    const now = this.now();
    const { taskId } = signal.task;
    const seen = listener.delivered.get(taskId);
    if (seen !== undefined && seen.version >= signal.version) return false;
    listener.delivered.set(taskId, { version: signal.version, at: now });
    for (const [id, delivered] of listener.delivered) {
      // A task not heard of for longer than its signals live cannot be shown one again.
      if (now - delivered.at > 2 * TASK_SIGNAL_TTL_MS) listener.delivered.delete(id);
    }
    return true;
  }

  private async deliver(
    listening: Listening,
    signal: TaskStatusSignal,
    message: JsonRpcMessage,
  ): Promise<void> {
    const { stream } = listening;
    if (stream.closed) return;
    // A new server under the task's name never inherits it (§2.8).
    if (this.options.identityOf(signal.server) !== signal.serverIdentity) return;
    let permitted: boolean;
    try {
      permitted = await stream.mayUse(signal.server, signal.tool, signal.toolAnnotations);
    } catch (error) {
      this.options.logger.warn(
        `MCP broker: no task notification sent, the permission decision failed: ${error}`,
      );
      return;
    }
    if (permitted && stream.send(message)) {
      this.options.onSent?.(listening.modern === undefined ? 'legacy' : 'modern');
    }
  }
}
