/*
 * McpBroker: the business side of the broker, independent of Express.
 *
 * It owns one BackendConnection per configured backend, the aggregated catalog built from
 * their lists, the client sessions of this replica, the 2026-07-28 listen streams of this
 * replica, and the notifier that fans list changes out to both kinds of client stream; the
 * task machinery (BrokerTasks: the task relays, the watcher of their tasks and their status
 * notifications), which reaches the backends through its connections.
 * Guarantees: a backend's list change is refreshed before clients hear of it; clients hear of a change only through streams open at the moment of sending;
 * after a reconnect clients are told only when their view actually changed; `close()` first
 * drains (new requests are refused, calls in flight may finish until `shutdownDrainTimeout`,
 * the rest are answered "shutting down, retry"), then ends every stream, timer and backend
 * session it owns. Listen streams end with their `complete` result as soon as the drain begins
 * (they never finish by themselves; their clients re-listen elsewhere), and so do GET streams,
 * each after its stream lease is given up (their clients open them again elsewhere at once).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerConfig, BrokerServerConfig, ServerSource } from '../config';
import {
  ClientSession,
  ClientSessionRegistry,
  STREAM_LEASE_RENEW_MS,
} from '../sessions/ClientSessionRegistry';
import type { ClientSessionStore } from '../sessions/ClientSessionStore';
import { advertisedListKinds } from '../protocol/listKinds';
import { BackendConnection } from '../backend/BackendConnection';
import type {
  BackendConnectionStatus,
  BackendLists,
  BackendListTtls,
  ListsUpdate,
} from '../backend/backendConnectionTypes';
import {
  AggregatedCatalog,
  NameClash,
  RejectedTool,
  ViewKind,
  WithheldTool,
} from './AggregatedCatalog';
import type { ToolPins } from '../pinning/ToolPins';
import { EVERYONE, ListAudience, ListChangedNotifier } from './ListChangedNotifier';
import type { ListChange, ListViews } from './ListViews';
import { ListenSubscriptions } from './ListenSubscriptions';
import type { ClientEventStream, ClientEventStreamOpener, ToolCallHandler } from '../types';
import type { ToolCallHandlerFactory } from '../calls/createStreamingToolCallHandler';
import { declaredUiExtension, UI_EXTENSION_ID } from '../protocol/uiExtension';
import { BROKER_TASKS_CAPABILITY } from '../protocol/legacyTasks';
import type { AuditedTaskOperation } from '../tasks/TaskAuditor';
import type { LegacyTaskRelay } from '../tasks/LegacyTaskRelay';
import type { ModernTaskRelay } from '../tasks/ModernTaskRelay';
import type { CrossEraTaskRelay } from '../tasks/CrossEraTaskRelay';
import { TaskCreationRounds } from '../tasks/TaskCreationRounds';
import { withoutTaskSupport } from '../tasks/withoutTaskSupport';
import { uiResourceCount } from './uiResourceCount';
import { serverIdentityOf } from '../identity/serverIdentity';
import type { TaskStore } from '../tasks/TaskStore';
import type { TaskNotifications } from '../tasks/TaskNotifications';
import { BrokerTasks, type BrokerTaskOptions } from './BrokerTasks';

/**
 * One backend on the status endpoint: its connection status, where its entry came from, whether
 * it supports tasks and how many MCP Apps UI resources it serves (contract tasks-and-apps §5).
 */
export type BackendStatus = BackendConnectionStatus & {
  source: ServerSource;
  tasks: { supported: boolean };
  apps: { uiResources: number };
};

/** The status endpoint's body. */
export interface BrokerStatus {
  backends: BackendStatus[];
  clashes: NameClash[];
  /** Backend tools left out because their `x-mcp-header` annotations are invalid. */
  rejectedTools: RejectedTool[];
  /** Backend tools withheld until their changed definition is approved (spec §13). */
  withheldTools: WithheldTool[];
  /**
   * `listenStreams`: open 2026-07-28 `subscriptions/listen` streams on this replica;
   * `tasksWatched`: the tasks whose lease this replica holds (contract tasks-and-apps §2.10, §5).
   */
  clients: { sessions: number; eventStreams: number; listenStreams: number; tasksWatched: number };
}

/** Options of {@link McpBroker.create}. */
export interface McpBrokerOptions {
  config: BrokerConfig;
  logger: LoggerService;
  toolCallHandlerFactory: ToolCallHandlerFactory;
  /** Where client sessions are recorded; default in memory (one replica). */
  sessionStore?: ClientSessionStore;
  /**
   * Whose view a list change can have altered (the permission decisions); without it every
   * stream hears of every change.
   */
  listViews?: ListViews;
  /**
   * The pinned tool definitions (spec §13): each backend's tools are reviewed before clients
   * see them, and withheld where the pins say so. Without it every tool is served.
   */
  toolPins?: ToolPins;
  /** The task table, the task audit and the task counters: see {@link BrokerTaskOptions}. */
  tasks?: BrokerTaskOptions;
}

const VIEW_KINDS: readonly ViewKind[] = ['tools', 'resources', 'prompts'];

/**
 * Servers added together are announced together: clients hear one list_changed per kind once
 * every added server has listed (or failed to connect), or after this long at most.
 */
const ADDED_SERVERS_SETTLE_MAX_MS = 10_000;

/** A change of the server set whose notifications wait until the added servers have listed. */
interface PendingServerChange {
  /** The catalog clients last heard of (before the change). */
  readonly baseline: AggregatedCatalog;
  /** Added servers that have not listed or failed yet. */
  readonly waiting: Set<string>;
  /** Kinds announced by backend events meanwhile, with their servers (sent even if the lists look the same). */
  readonly eventKinds: Map<string, Set<string>>;
  readonly timer: NodeJS.Timeout;
}

/** The broker: backend connections, aggregated catalog, client sessions and notifications. */
export class McpBroker {
  readonly sessions: ClientSessionRegistry;
  readonly toolCalls: ToolCallHandler;
  /** The `subscriptions/listen` streams of this replica (2026-07-28 clients). */
  readonly listenStreams: ListenSubscriptions;
  /** The task relays, their watcher, notifications and sweep (contract tasks-and-apps §2). */
  private readonly brokerTasks: BrokerTasks;
  /** Input before a 2025-11-25 backend's task exists, for 2026-07-28 clients (§2.12.4). */
  readonly taskCreationRounds: TaskCreationRounds;
  private readonly connections = new Map<string, BackendConnection>();
  private servers: BrokerServerConfig[] = [];
  private catalogSnapshot = AggregatedCatalog.empty();
  private readonly notifier: ListChangedNotifier;
  private readonly streams = new Set<ClientEventStream>();
  /** Connections of removed servers that are still closing (awaited on shutdown). */
  private readonly closing = new Set<Promise<void>>();
  private readonly lifetime = new AbortController();
  private readonly idleSweep: NodeJS.Timeout;
  private readonly leaseRenewal: NodeJS.Timeout;
  private pendingChange: PendingServerChange | undefined;
  private drained: Promise<void> | undefined;
  private readonly rebuildListeners = new Set<() => void>();

  private constructor(private readonly options: McpBrokerOptions) {
    this.sessions = new ClientSessionRegistry({
      store: options.sessionStore,
      ttlMs: options.config.sessionIdleTimeoutMs,
      limits: options.config.sessionLimits,
      sharedStore: options.sessionStore !== undefined,
      // Released to make room here (the session goes on): close its backend sessions here.
      onReleased: id => this.toolCalls.closeBackendSessionsOf?.(id) ?? Promise.resolve(),
      // A session ended (here, on another replica, or by expiry): release what this replica holds.
      onEnded: id => this.toolCalls.closeClientSession(id),
    });
    // Counted on this replica with the session limits' numbers (no shared record exists).
    this.listenStreams = new ListenSubscriptions(options.config.sessionLimits);
    this.notifier = new ListChangedNotifier(
      options.config.coalesceWindowMs,
      () => this.sessions.viewedEventStreams(),
      (kind, audience) => this.listenStreams.notify(kind, audience),
    );
    this.toolCalls = options.toolCallHandlerFactory({
      config: options.config,
      logger: options.logger,
      backends: {
        get: name => this.connections.get(name),
        all: () => this.connections.values(),
      },
      paramHeadersOf: (backend, tool) => this.catalogSnapshot.paramHeadersOf(backend, tool),
    });
    this.brokerTasks = new BrokerTasks(options, this.connections);
    this.taskCreationRounds = new TaskCreationRounds({
      sealer: this.toolCalls.requestStates,
      ttlMs: options.config.elicitationTtlMs,
      respond: async (server, session, rawId, answer) =>
        this.connections.get(server)?.legacy.respond(session, rawId, answer),
    });
    // An approval, a rejection or another replica's decision changes what is withheld.
    options.toolPins?.onChange(() => this.rebuildCatalog(new Map()));
    this.idleSweep = setInterval(() => this.sweepSessions(), this.sessions.sweepIntervalMs);
    this.idleSweep.unref();
    // Open GET streams keep their session's stream lease (one stream per session, all replicas).
    this.leaseRenewal = setInterval(() => {
      this.sessions.renewEventStreams().catch(error => {
        this.options.logger.warn(`Could not renew the leases of MCP client streams: ${error}`);
      });
    }, STREAM_LEASE_RENEW_MS);
    this.leaseRenewal.unref();
  }

  /**
   * Announces list_changed of `kinds` (default every kind) to the streams whose viewer is in
   * `audience`: their view changed without a catalog change (an access grant came or went, a
   * curated endpoint was changed).
   */
  announceViewChanges(audience: ListAudience, kinds: readonly ViewKind[] = VIEW_KINDS): void {
    for (const kind of kinds) this.notifier.notify(kind, audience);
  }

  /** Creates the broker and starts connecting to the configured backends. */
  static create(options: McpBrokerOptions): McpBroker {
    const broker = new McpBroker(options);
    broker.setServers(options.config.servers);
    return broker;
  }

  /** The broker's configuration. */
  get config(): BrokerConfig {
    return this.options.config;
  }

  /** The plugin's logger (the router logs the few failures it answers itself). */
  get logger(): LoggerService {
    return this.options.logger;
  }

  /** True once shutdown began: new requests and streams are refused, calls in flight drain. */
  get draining(): boolean {
    return this.drained !== undefined;
  }

  /**
   * Shutdown, first half (idempotent): from now on new requests and streams are refused; calls
   * in flight may finish until `shutdownDrainTimeout`, then each remaining one is answered
   * "shutting down, may be retried". Resolves when no call is in flight. Run it while the
   * HTTP router still serves the plugin (Backstage refuses every request to a plugin once its
   * own shutdown hooks run), so that clients can still answer elicitations of draining calls.
   */
  drain(): Promise<void> {
    this.listenStreams.closeAll();
    this.brokerTasks.stopInput();
    this.drained ??= Promise.all([
      // GET streams end now, their leases given up first: their clients open them again on
      // another replica at once, while the calls here drain.
      this.sessions.endEventStreams(error =>
        this.options.logger.warn(
          `Could not give up the lease of an MCP client stream on shutdown (it lapses): ${error}`,
        ),
      ),
      this.toolCalls.drain?.(this.options.config.shutdownDrainTimeoutMs),
      this.brokerTasks.drain(this.options.config.shutdownDrainTimeoutMs),
    ]).then(() => undefined);
    return this.drained;
  }

  /** How many tasks this replica watches (holds the lease of, contract tasks-and-apps §2.10). */
  get tasksWatched(): number {
    return this.brokerTasks.tasksWatched;
  }

  /** Long-running tasks of 2025-11-25 clients and backends (contract tasks-and-apps §2). */
  get tasks(): LegacyTaskRelay {
    return this.brokerTasks.tasks;
  }

  /** Long-running tasks of 2026-07-28 clients and backends (contract tasks-and-apps §2.12.2). */
  get modernTasks(): ModernTaskRelay {
    return this.brokerTasks.modernTasks;
  }

  /**
   * Tasks of 2026-07-28 clients whatever their backend's era (contract tasks-and-apps §2.12.4;
   * a modern backend's tasks go on to {@link McpBroker.modernTasks}).
   */
  get crossEraTasks(): CrossEraTaskRelay {
    return this.brokerTasks.crossEraTasks;
  }

  /** The shared task table (contract §2.4). */
  get taskStore(): TaskStore {
    return this.brokerTasks.taskStore;
  }

  /** Task status changes to this replica's client streams (contract tasks-and-apps §2.10). */
  get taskNotifications(): TaskNotifications {
    return this.brokerTasks.taskNotifications;
  }

  /** Records one `mcp-broker.task` audit event (§2.14), when task auditing is on. */
  auditTaskOperation(operation: AuditedTaskOperation): Promise<void> {
    return this.brokerTasks.auditTaskOperation(operation);
  }

  /** Aborted when the broker shuts down (after the drain). */
  get shutdownSignal(): AbortSignal {
    return this.lifetime.signal;
  }

  /** The current aggregated catalog. */
  catalog(): AggregatedCatalog {
    return this.catalogSnapshot;
  }

  /** The connection of a backend by name. */
  connection(name: string): BackendConnection | undefined {
    return this.connections.get(name);
  }

  /**
   * The `ttlMs` hints the backends gave with their last lists of these kinds (2026-07-28
   * backends only; a legacy backend gives none): what a modern client's list ttl aggregates.
   */
  listTtlHints(kinds: ReadonlyArray<keyof BackendListTtls>): number[] {
    const hints: number[] = [];
    for (const connection of this.connections.values()) {
      for (const kind of kinds) {
        const ttl = connection.listTtls[kind];
        if (ttl !== undefined) hints.push(ttl);
      }
    }
    return hints;
  }

  /**
   * Calls `listener` after every rebuild of the catalog (the server set changed or a server
   * re-listed); returns the function that removes it. A listener must not throw.
   */
  onCatalogRebuilt(listener: () => void): () => void {
    this.rebuildListeners.add(listener);
    return () => this.rebuildListeners.delete(listener);
  }

  /** The configured backend by name. */
  server(name: string): BrokerServerConfig | undefined {
    return this.servers.find(s => s.name === name);
  }

  /** The current server set, in priority order (it changes at runtime). */
  serverList(): readonly BrokerServerConfig[] {
    return this.servers;
  }

  /**
   * Replaces the set of backends: new ones are connected, removed ones are closed and their
   * entries dropped, changed ones (any field: url, headers, toolPrefix) are reconnected.
   * Everything that belongs to a removed or changed backend goes with it: its backend sessions,
   * in-flight calls (and so their pending elicitation ids) and cached lists. Clients get one
   * list_changed per kind whose view changed, once the added servers have listed.
   */
  setServers(servers: readonly BrokerServerConfig[]): void {
    if (this.lifetime.signal.aborted) return;
    const next = new Map(servers.map(s => [s.name, s]));
    const added: string[] = [];
    for (const [name, connection] of [...this.connections]) {
      const wanted = next.get(name);
      if (wanted && JSON.stringify(wanted) === JSON.stringify(connection.backend)) continue;
      this.connections.delete(name);
      const closed = connection.close().finally(() => this.closing.delete(closed));
      this.closing.add(closed);
      void this.toolCalls.removeBackend(name);
      if (!wanted) this.options.toolPins?.forget(name);
      // Its tasks go with a removed server, and with one replaced under its name (contract
      // tasks-and-apps §2.5); a change that keeps its identity (headers) keeps them.
      if (!wanted || serverIdentityOf(wanted) !== serverIdentityOf(connection.backend)) {
        this.tasks
          .forgetServer(connection.backend)
          .catch(error =>
            this.options.logger.warn(
              `Could not delete the tasks of MCP server "${name}": ${error}`,
            ),
          );
      }
    }
    this.servers = [...servers];
    for (const server of servers) {
      if (this.connections.has(server.name)) continue;
      added.push(server.name);
      const connection = new BackendConnection({
        backend: server,
        logger: this.options.logger,
        requestTimeoutMs: this.options.config.requestTimeoutMs,
        eventStreamOpenMs: this.options.config.eventStreamOpenTimeoutMs,
        pollIntervalMs: this.options.config.pollIntervalMs,
        reconnect: this.options.config.reconnect,
        minRelistIntervalMs: this.options.config.coalesceWindowMs,
        listLimits: {
          maxItems: this.options.config.backendLimits.maxListItems,
          maxPages: this.options.config.backendLimits.maxListPages,
        },
        onListsUpdated: (name, update) => this.onListsUpdated(name, update),
        onStateChanged: (name, state) => {
          this.options.logger.info(`MCP backend ${name} is ${state}`);
          if (state === 'backing-off' || state === 'failed') this.settled(name);
        },
      });
      this.connections.set(server.name, connection);
    }
    this.beginChange(added);
    for (const name of added) this.connections.get(name)!.start();
    this.rebuildCatalog(new Map());
  }

  /**
   * The capabilities the broker advertises to clients; through a curated endpoint (spec §13),
   * those of its `servers` only.
   */
  serverCapabilities(servers?: ReadonlySet<string>): Record<string, unknown> {
    const advertised = new Set<string>();
    let completions = false;
    let tasks = false;
    let apps =
      servers === undefined
        ? this.catalogSnapshot.hasAppTools
        : this.catalogSnapshot.hasAppToolsOf(servers);
    for (const [name, connection] of this.connections) {
      if (servers !== undefined && !servers.has(name)) continue;
      for (const kind of advertisedListKinds(connection.capabilities ?? {})) advertised.add(kind);
      if (connection.capabilities?.completions !== undefined) completions = true;
      // Either era's tasks (a 2026-07-28 backend's are translated, §2.12.3).
      if (connection.supportsTaskCalls || connection.supportsTaskExtension) {
        tasks = this.config.tasks.enabled;
      }
      if (declaredUiExtension(connection.capabilities) !== undefined) apps = true;
    }
    return {
      // The broker itself announces tool list changes (a backend removed or reconnected).
      tools: { listChanged: true },
      resources: { listChanged: advertised.has('resources') },
      prompts: { listChanged: advertised.has('prompts') },
      // completion/complete is routed to the owner of the prompt or resource template.
      ...(completions ? { completions: {} } : {}),
      // Task-augmented tool calls are relayed to the backends that take them (contract §2.2).
      ...(tasks ? { tasks: structuredClone(BROKER_TASKS_CAPABILITY) } : {}),
      // Informational (ext-apps defines no server capability): some backend serves MCP Apps.
      ...(apps ? { extensions: { [UI_EXTENSION_ID]: {} } } : {}),
    };
  }

  /**
   * True when 2026-07-28 clients are offered the tasks extension (contract tasks-and-apps §2.2):
   * tasks are on and a backend (through a curated endpoint: one of its `servers`) supports tasks
   * in either era (a 2025-11-25 backend's are translated, §2.12.4).
   */
  offersModernTasks(servers?: ReadonlySet<string>): boolean {
    if (!this.config.tasks.enabled) return false;
    return [...this.connections].some(
      ([name, connection]) =>
        (servers === undefined || servers.has(name)) &&
        // A 2025-11-25 backend's tasks are translated (§2.12.4).
        (connection.supportsTaskExtension || connection.supportsTaskCalls),
    );
  }

  /**
   * Opens a client stream owned by the broker (closed on shutdown) with the configured
   * keep-alive and buffer bound; `open` is the transport's (the router's SSE response).
   */
  openEventStream(open: ClientEventStreamOpener): ClientEventStream {
    const stream = open({
      keepAliveMs: this.options.config.keepAliveMs,
      maxBufferedBytes: this.options.config.clientStreamBufferBytes,
      onClose: reason => {
        this.streams.delete(stream);
        if (reason === 'too-slow') {
          this.options.logger.warn('MCP broker: disconnected a client stream that stopped reading');
        }
      },
    });
    this.streams.add(stream);
    return stream;
  }

  /** Ends a client session and everything that belongs to it, on every replica. */
  async endSession(session: Pick<ClientSession, 'id'>): Promise<void> {
    await this.sessions.end(session.id);
    await this.toolCalls.announceSessionEnd?.(session.id);
  }

  /** A snapshot for the status endpoint (no credentials). */
  status(): BrokerStatus {
    return {
      backends: this.servers.map(s => {
        const connection = this.connections.get(s.name)!;
        return {
          ...connection.status(),
          source: s.source ?? { type: 'config' },
          tasks: { supported: connection.supportsTaskCalls },
          apps: { uiResources: uiResourceCount(connection.cachedLists) },
        };
      }),
      clashes: [...this.catalogSnapshot.clashes],
      rejectedTools: [...this.catalogSnapshot.rejectedTools],
      withheldTools: [...this.catalogSnapshot.withheldTools],
      clients: {
        sessions: this.sessions.size,
        eventStreams: this.sessions.openEventStreams().length,
        listenStreams: this.listenStreams.size,
        tasksWatched: this.tasksWatched,
      },
    };
  }

  /**
   * Drains (see the file comment), then closes every stream, timer and backend session. The
   * calls' answers go out on their own streams before any stream is closed.
   */
  async close(): Promise<void> {
    await this.drain();
    this.lifetime.abort();
    clearInterval(this.idleSweep);
    clearInterval(this.leaseRenewal);
    if (this.pendingChange) clearTimeout(this.pendingChange.timer);
    this.pendingChange = undefined;
    this.notifier.close();
    await this.brokerTasks.close();
    this.sessions.closeLocal();
    for (const stream of [...this.streams]) stream.close();
    await this.toolCalls.close();
    this.options.toolPins?.close();
    await Promise.all([...this.connections.values()].map(c => c.close()));
    await Promise.all([...this.closing]);
  }

  /** Extends sessions in use here, ends those gone from the store, removes expired records. */
  private sweepSessions() {
    this.sessions.sweep().catch(error => {
      this.options.logger.warn(`Could not sweep MCP client sessions: ${error}`);
    });
  }

  private onListsUpdated(name: string, update: ListsUpdate) {
    const connection = this.connections.get(name);
    if (!connection) return; // a late answer from a removed backend
    const pins = this.options.toolPins;
    if (pins === undefined) {
      this.listsReviewed(name, update);
      return;
    }
    const review = pins.review(connection.backend, connection.cachedLists.tools);
    if (pins.modeOf(connection.backend) !== 'enforce') {
      // Nothing is withheld: clients hear of the lists at once, the pins follow.
      this.listsReviewed(name, update);
      return;
    }
    // Under enforce the pins are current before clients hear of the lists (review never fails).
    void review.then(() => this.listsReviewed(name, update));
  }

  private listsReviewed(name: string, update: ListsUpdate) {
    if (!this.connections.has(name) || this.lifetime.signal.aborted) return;
    this.rebuildCatalog(new Map([...update.eventKinds].map(kind => [kind, new Set([name])])));
    if (update.eventKinds.has('roots')) this.notifier.notify('roots');
    this.settled(name);
  }

  /**
   * Starts holding back notifications until `added` servers have listed or failed, so that a
   * reload adding several servers sends one list_changed per kind, not one per server. A change
   * while one is pending extends it (the baseline stays what clients last heard of).
   */
  private beginChange(added: readonly string[]) {
    const pending = this.pendingChange;
    if (pending) {
      for (const name of [...pending.waiting])
        if (!this.connections.has(name)) pending.waiting.delete(name);
      for (const name of added) pending.waiting.add(name);
      return;
    }
    if (added.length === 0) return;
    const timer = setTimeout(() => this.finishChange(), ADDED_SERVERS_SETTLE_MAX_MS);
    timer.unref();
    this.pendingChange = {
      baseline: this.catalogSnapshot,
      waiting: new Set(added),
      eventKinds: new Map(),
      timer,
    };
  }

  /** An added server has listed or failed: when it was the last one, announce the change. */
  private settled(name: string) {
    const pending = this.pendingChange;
    if (!pending || !pending.waiting.delete(name)) return;
    if (pending.waiting.size === 0) this.finishChange();
  }

  private finishChange() {
    const pending = this.pendingChange;
    if (!pending) return;
    clearTimeout(pending.timer);
    this.pendingChange = undefined;
    this.notifyChanges(pending.baseline, pending.eventKinds);
  }

  /**
   * Rebuilds the catalog; notifies kinds whose view changed, or that an event announced
   * (`eventKinds`: kind → the servers that announced it).
   */
  private rebuildCatalog(eventKinds: ReadonlyMap<string, ReadonlySet<string>>) {
    const previous = this.catalogSnapshot;
    this.catalogSnapshot = AggregatedCatalog.build(
      this.servers.map(server => ({
        backend: server,
        lists: this.listsShown(server.name),
      })),
      this.options.toolPins && {
        admitTool: (backend, tool) => this.options.toolPins!.admits(backend, tool),
      },
    );
    this.warnAboutRejectedTools(previous);
    this.warnAboutClashes(previous);
    for (const listener of this.rebuildListeners) listener();
    if (this.pendingChange) {
      for (const [kind, servers] of eventKinds) {
        const announced = this.pendingChange.eventKinds.get(kind) ?? new Set<string>();
        for (const server of servers) announced.add(server);
        this.pendingChange.eventKinds.set(kind, announced);
      }
      return;
    }
    this.notifyChanges(previous, eventKinds);
  }

  /** A server's lists as clients see them: no task support where no task is relayed (§2.2). */
  private listsShown(name: string): BackendLists {
    const lists = this.connections.get(name)!.cachedLists;
    return this.tasks.relays(name)
      ? lists
      : { ...lists, tools: lists.tools.map(withoutTaskSupport) };
  }

  /** Logs each rejected tool once: when it first appears (or its reason changes). */
  private warnAboutRejectedTools(previous: AggregatedCatalog) {
    const known = new Set(previous.rejectedTools.map(r => JSON.stringify(r)));
    for (const rejected of this.catalogSnapshot.rejectedTools) {
      if (known.has(JSON.stringify(rejected))) continue;
      this.options.logger.warn(
        `MCP server "${rejected.backend}": tool "${rejected.tool.slice(0, 200)}" left out of ` +
          `tools/list, its inputSchema has an invalid x-mcp-header annotation: ${rejected.reason}`,
      );
    }
  }

  /**
   * Logs each name clash once, when it first appears, naming both servers: the later server's
   * item is hidden (first in config order wins), so a call never reaches the wrong server.
   */
  private warnAboutClashes(previous: AggregatedCatalog) {
    const known = new Set(previous.clashes.map(c => JSON.stringify(c)));
    for (const clash of this.catalogSnapshot.clashes) {
      if (known.has(JSON.stringify(clash))) continue;
      this.options.logger.warn(
        `MCP server "${clash.hidden}": ${clash.kind} "${clash.name.slice(0, 200)}" hidden, ` +
          `MCP server "${clash.owner}" (earlier in mcpBroker.servers) already serves that name; ` +
          'give one of them another toolPrefix',
      );
    }
  }

  private notifyChanges(
    previous: AggregatedCatalog,
    eventKinds: ReadonlyMap<string, ReadonlySet<string>>,
  ) {
    for (const kind of VIEW_KINDS) {
      const changed = previous.fingerprint(kind) !== this.catalogSnapshot.fingerprint(kind);
      const announcedBy = eventKinds.get(kind) ?? new Set<string>();
      if (!changed && announcedBy.size === 0) continue;
      this.notifier.notify(
        kind,
        this.audienceOf({
          kind,
          previous,
          next: this.catalogSnapshot,
          visible: changed,
          announcedBy,
        }),
      );
    }
  }

  /**
   * The viewers a change concerns (listViews decides, once per viewer); a stream without a
   * viewer, or a broker without listViews, hears of every change.
   */
  private audienceOf(change: ListChange): ListAudience {
    const views = this.options.listViews;
    if (views === undefined) return EVERYONE;
    const decided = new Map<string, boolean>();
    return viewer => {
      if (viewer === undefined) return true;
      let concerned = decided.get(viewer);
      if (concerned === undefined) {
        concerned = views.mayHaveChanged(viewer, change);
        decided.set(viewer, concerned);
      }
      return concerned;
    };
  }
}
