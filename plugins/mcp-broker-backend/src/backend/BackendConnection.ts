/*
 * BackendConnection: the broker's own session with one backend MCP server.
 *
 * Life cycle (one loop, owned by this object, ended by close()):
 *   era detection (ModernChannel.probe: `server/discover` first; a backend that does not
 *   speak 2026-07-28 gets the legacy handshake; after a 5xx or an answer that is no MCP message
 *   the legacy handshake is tried too, and when it fails as well the attempt fails with both
 *   answers; 401/403 and network errors say nothing about the era and fail the attempt like any
 *   other failure; done again on every reconnect, so a backend that changes era across a
 *   restart is followed). A legacy backend:
 *   initialize (broker's credentials, client capabilities elicitation + sampling)
 *   → notifications/initialized → list tools/resources/templates/prompts
 *   → GET event stream when the backend advertises listChanged
 *       (405 → re-list every pollInterval instead; no listChanged → just stay connected)
 *   → on any drop: back off (exponential, jittered, forever) and reconnect; a lost session
 *     (404) is re-initialized at once, a second loss in a row waits like any failure.
 * "Healthy" (what resets the backoff and the lost-session rule) means that the event connection
 * (GET stream open, listen stream acknowledged, polling, or connected without a stream) has
 * stayed up for the stable period: a backend that accepts initialize and the lists but drops its
 * stream at once is reconnected with growing delays, not at the initial delay forever.
 * A modern (2026-07-28) backend has no session: lists and requests are stateless (per-request
 * `_meta`), and events come over a `subscriptions/listen` stream (acknowledged first; a backend
 * without listen is polled), with the same validation, coalescing and reconnection. The `ttlMs`
 * of its list results is kept per list. The tasks extension is removed from the capabilities of
 * either era (the broker does not relay it).
 * Every reconnect re-lists, and the listener hears which lists changed. The event connection
 * (GET stream, listen stream, polling) is a BackendEventStream (BackendEventStream.ts), one per
 * connection, run once per attempt: it validates events (eventValidation.ts) and coalesces bursts
 * (while a refresh runs, further events only mark their kind dirty, and one more refresh follows).
 *
 * The event connection must open within `eventStreamOpenMs` (`mcpBroker.eventStreamOpenTimeout`:
 * the GET stream's headers, the listen stream's acknowledgement): a stream that never opens fails
 * the attempt (`lastError` says so, the state backs off and the attempt is retried with the
 * backoff) instead of leaving the backend `connected` without events until `requestTimeout`.
 *
 * The same channels (LegacyChannel, ModernChannel over one transport) carry the clients' tool
 * calls to this backend: one client stack per backend.
 *
 * The last known lists survive a disconnect (clients keep seeing the backend's tools while it
 * restarts); requests during a disconnect fail fast with a clear error.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  DEFAULT_COALESCE_WINDOW_MS,
  DEFAULT_EVENT_STREAM_OPEN_TIMEOUT_MS,
  DEFAULT_MAX_LIST_ITEMS,
  DEFAULT_MAX_LIST_PAGES,
  type BrokerServerConfig,
} from '../config';
import {
  classifyJsonRpc,
  JsonRpcErrorCode,
  JsonRpcMessage,
  JsonRpcRequest,
} from '../protocol/jsonRpc';
import type { ActiveSession } from './activeSession';
import { ExponentialBackoff } from './ExponentialBackoff';
import {
  BackendError,
  backendNotConnected,
  BackendRpcError,
  describeFailure,
} from './backendErrors';
import { BackendEventStream } from './BackendEventStream';
import type {
  BackendConnectionState,
  BackendConnectionStatus,
  BackendListTtls,
  BackendLists,
  ListsUpdate,
} from './backendConnectionTypes';
import type { ListKind } from '../protocol/listKinds';
import { BROKER_CLIENT_CAPABILITIES } from '../protocol/capabilities';
import type { ProtocolEra } from '../protocol/modernEra';
import { withoutTasks } from '../protocol/modernResults';
import { declaresTasksExtension } from '../protocol/modernTasks';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import type { BackendEndpoint, BackendTransport } from './backendTransport';
import { HttpBackendTransport, redactUrl } from './HttpBackendTransport';
import { LegacyChannel, LegacySession } from './LegacyChannel';
import { ModernChannel } from './ModernChannel';
import { requestSignal } from './requestSignal';
import { sleep } from './sleep';
import { changedListKinds } from './changedListKinds';
import { BackendMisbehaviours } from './BackendMisbehaviours';
import { describeTruncation, ListLimits, ListTruncation, readPagedList } from './pagedList';

/**
 * Longest stable period (see the file comment). The period is the configured `maxDelay` up to
 * this cap: a connection that stays up that long and then drops is reconnected no more often
 * than a backend that is down altogether, and tests that shorten the backoff shorten it too.
 */
const MAX_STABLE_PERIOD_MS = 10_000;

/** Options of a BackendConnection. */
export interface BackendConnectionOptions {
  backend: BrokerServerConfig;
  logger: LoggerService;
  requestTimeoutMs: number;
  pollIntervalMs: number;
  reconnect: { initialDelayMs: number; maxDelayMs: number };
  /** Called after every (re-)listing with what changed. */
  onListsUpdated(name: string, update: ListsUpdate): void;
  /** How the backend is reached; streamable HTTP (HttpBackendTransport) when omitted. */
  transport?: BackendTransport;
  /** Called whenever the state changes (for logging and tests). */
  onStateChanged?(name: string, state: BackendConnectionState): void;
  /**
   * How long the event connection may take to open (a GET stream's headers, a listen stream's
   * acknowledgement), capped by `requestTimeoutMs`; default
   * {@link DEFAULT_EVENT_STREAM_OPEN_TIMEOUT_MS} (`mcpBroker.eventStreamOpenTimeout`).
   */
  eventStreamOpenMs?: number;
  /** Bounds of each list read from the backend (`mcpBroker.backendLimits`; defaults there). */
  listLimits?: ListLimits;
  /** Shortest time between re-lists that events ask for (`mcpBroker.coalesceWindow`). */
  minRelistIntervalMs?: number;
}

/** Options of one request over the broker's own connection. */
export interface BackendConnectionRequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** What a modern backend is told of the client (`{}`: none); legacy: the broker's session's. */
  clientCapabilities?: Record<string, unknown>;
}

const EMPTY_LISTS: BackendLists = { tools: [], resources: [], resourceTemplates: [], prompts: [] };

/** The broker's own connection to one backend, and the channels the clients' calls use. */
export class BackendConnection {
  /** The backend's 2025-11-25 channel (the broker's own session, and the clients'). */
  readonly legacy: LegacyChannel;
  /** The backend's 2026-07-28 channel. */
  readonly modern: ModernChannel;
  /** The backend as the channels reach it (name, URL, the broker's credentials). */
  readonly endpoint: BackendEndpoint;
  private detectedEra?: { era: ProtocolEra; at: number };
  private ttls: BackendListTtls = {};
  private readonly backoff: ExponentialBackoff;
  private readonly lifetime = new AbortController();
  private cycle?: AbortController;
  private loop?: Promise<void>;
  private session?: ActiveSession;
  private nextRequestId = 1;
  private lists: BackendLists = EMPTY_LISTS;
  private state: BackendConnectionState = 'connecting';
  /** How the broker hears of the backend's list changes (the GET stream, listen, polling). */
  private readonly events: BackendEventStream;
  private nextRetryAt?: number;
  private lastConnectedAt?: number;
  private lastError?: string;
  private previousFailureLostSession = false;
  private readonly stablePeriodMs: number;
  private stableTimer?: ReturnType<typeof setTimeout>;
  private readonly listLimits: ListLimits;
  /** The lists cut at the last listing, and by which bound. */
  private truncations: Partial<Record<keyof BackendLists, ListTruncation>> = {};
  /** What the backend did wrong that the broker noticed (shown on `/status`). */
  readonly misbehaviours = new BackendMisbehaviours();

  constructor(private readonly options: BackendConnectionOptions) {
    const { backend, requestTimeoutMs } = options;
    const transport = options.transport ?? HttpBackendTransport.shared;
    this.endpoint = { name: backend.name, url: backend.url, headers: { ...backend.headers } };
    this.legacy = new LegacyChannel(this.endpoint, transport, requestTimeoutMs, this.misbehaviours);
    this.modern = new ModernChannel(this.endpoint, transport, requestTimeoutMs, this.misbehaviours);
    this.backoff = new ExponentialBackoff(
      options.reconnect.initialDelayMs,
      options.reconnect.maxDelayMs,
    );
    this.stablePeriodMs = Math.min(options.reconnect.maxDelayMs, MAX_STABLE_PERIOD_MS);
    this.listLimits = options.listLimits ?? {
      maxItems: DEFAULT_MAX_LIST_ITEMS,
      maxPages: DEFAULT_MAX_LIST_PAGES,
    };
    this.events = new BackendEventStream({
      backendName: backend.name,
      legacy: this.legacy,
      modern: this.modern,
      logger: options.logger,
      pollIntervalMs: options.pollIntervalMs,
      openTimeoutMs: Math.min(
        requestTimeoutMs,
        options.eventStreamOpenMs ?? DEFAULT_EVENT_STREAM_OPEN_TIMEOUT_MS,
      ),
      lifetime: this.lifetime.signal,
      nextRequestId: () => this.nextRequestId++,
      relist: (session, signal, eventKinds) => this.relist(session, signal, eventKinds),
      answerServerRequest: (message, session) => this.answerServerRequest(message, session),
      onUp: () => this.eventConnectionUp(),
      minRelistIntervalMs: options.minRelistIntervalMs ?? DEFAULT_COALESCE_WINDOW_MS,
      misbehaviours: this.misbehaviours,
    });
  }

  /** The backend this connection serves. */
  get backend(): BrokerServerConfig {
    return this.options.backend;
  }

  /**
   * The backend's capabilities from its last `initialize` or `server/discover` (without the
   * tasks extension), or undefined before the first.
   */
  get capabilities(): Record<string, unknown> | undefined {
    return this.session?.capabilities;
  }

  /** True when the backend's current session declared task-augmented `tools/call` (legacy). */
  get supportsTaskCalls(): boolean {
    return this.session?.era === 'legacy' && this.session.taskCalls === true;
  }

  /** True when the backend's last `server/discover` declared the tasks extension (modern). */
  get supportsTaskExtension(): boolean {
    return this.session?.era === 'modern' && this.session.tasksExtension === true;
  }

  /** The last known lists (kept across disconnects). */
  get cachedLists(): BackendLists {
    return this.lists;
  }

  /** The era the backend was last detected to speak; undefined before the first detection. */
  get era(): ProtocolEra | undefined {
    return this.detectedEra?.era;
  }

  /**
   * The `ttlMs` of each of the backend's last lists (modern backends only): what the modern
   * client path aggregates (the smallest non-zero value among the backends).
   */
  get listTtls(): Readonly<BackendListTtls> {
    return this.ttls;
  }

  /** Starts the connection loop (once). */
  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops the loop, closes the event stream and ends the backend session, and the clients'
   * sessions with this backend.
   */
  async close(): Promise<void> {
    this.lifetime.abort();
    await this.loop;
    const session = this.session;
    this.session = undefined;
    await Promise.all([
      session?.era === 'legacy' ? this.legacy.endSession(session) : undefined,
      this.legacy.closeSessions(),
    ]);
    this.setState('closed');
  }

  /**
   * Sends a request over the broker's own backend session and resolves with its result.
   * Rejects with BackendRpcError (the backend's JSON-RPC error) or BackendError.
   */
  async request(
    method: string,
    params: Record<string, unknown> | undefined,
    options: BackendConnectionRequestOptions = {},
  ): Promise<Record<string, unknown>> {
    const session = this.session;
    if (!session || this.state === 'closed') {
      throw backendNotConnected(this.backend.name, this.state);
    }
    return this.requestOn(session, method, params, {
      signals: [options.signal, this.lifetime.signal],
      timeoutMs: options.timeoutMs,
      clientCapabilities: options.clientCapabilities ?? {},
    });
  }

  /** A snapshot for the status endpoint. */
  status(): BackendConnectionStatus {
    return {
      name: this.backend.name,
      url: redactUrl(this.backend.url),
      state: this.state,
      eventStream: this.events.mode,
      nextRetryAt:
        (this.state === 'backing-off' || this.state === 'failed') && this.nextRetryAt !== undefined
          ? new Date(this.nextRetryAt).toISOString()
          : undefined,
      lastConnectedAt:
        this.lastConnectedAt === undefined
          ? undefined
          : new Date(this.lastConnectedAt).toISOString(),
      lastEventAt:
        this.events.lastEventAt === undefined
          ? undefined
          : new Date(this.events.lastEventAt).toISOString(),
      lastError: this.lastError,
      consecutiveFailures: this.backoff.failures,
      droppedEvents: this.events.droppedEvents,
      protocolVersion: this.session?.protocolVersion,
      era: this.detectedEra?.era,
      eraDetectedAt:
        this.detectedEra === undefined ? undefined : new Date(this.detectedEra.at).toISOString(),
      counts: {
        tools: this.lists.tools.length,
        resources: this.lists.resources.length,
        resourceTemplates: this.lists.resourceTemplates.length,
        prompts: this.lists.prompts.length,
      },
      truncatedLists: { ...this.truncations },
      misbehaviours: this.misbehaviours.snapshot(),
    };
  }

  private setState(state: BackendConnectionState) {
    if (this.state === state) return;
    this.state = state;
    this.options.onStateChanged?.(this.backend.name, state);
  }

  private async requestOn(
    session: ActiveSession,
    method: string,
    params: Record<string, unknown> | undefined,
    options: {
      signals: ReadonlyArray<AbortSignal | undefined>;
      timeoutMs?: number;
      clientCapabilities: Record<string, unknown>;
    },
  ): Promise<Record<string, unknown>> {
    const message: JsonRpcRequest = { jsonrpc: '2.0', id: this.nextRequestId++, method };
    if (params !== undefined) message.params = params;
    if (session.era === 'modern') {
      const response = await this.modern.request(message, options.clientCapabilities, options);
      if ('error' in response) throw new BackendRpcError(this.backend.name, response.error);
      return response.result;
    }
    try {
      const { response } = await this.legacy.request(message, session, {
        ...options,
        onServerMessage: m => this.answerServerRequest(m, session),
      });
      if ('error' in response) throw new BackendRpcError(this.backend.name, response.error);
      return response.result;
    } catch (error) {
      if (isSessionLost(error) && this.session === session) {
        // Make the loop re-initialize now rather than at the next event or poll.
        this.session = undefined;
        this.cycle?.abort();
      }
      throw error;
    }
  }

  /**
   * The broker's own session never relays server→client requests (tool calls that need them
   * run on per-client sessions); answer them so the backend does not wait forever.
   */
  private answerServerRequest(message: JsonRpcMessage, session: LegacySession) {
    const parsed = classifyJsonRpc(message);
    if (parsed?.kind !== 'request') return;
    const answer =
      parsed.message.method === 'ping'
        ? { jsonrpc: '2.0' as const, id: parsed.message.id, result: {} }
        : {
            jsonrpc: '2.0' as const,
            id: parsed.message.id,
            error: {
              code: JsonRpcErrorCode.MethodNotFound,
              message: `${parsed.message.method} is not available on the broker's own session`,
            },
          };
    this.legacy.send(answer, session, { signals: [this.lifetime.signal] }).catch(() => {});
  }

  private async run(): Promise<void> {
    while (!this.lifetime.signal.aborted) {
      const cycle = new AbortController();
      this.cycle = cycle;
      // The cycle's signal: aborted by close() or by cycle.abort() (a lost session).
      const scope = requestSignal([this.lifetime.signal, cycle.signal]);
      let error: unknown;
      try {
        await this.connectAndWatch(scope.signal);
      } catch (e) {
        error = e;
      } finally {
        scope.release();
        clearTimeout(this.stableTimer);
        this.stableTimer = undefined;
      }
      if (this.lifetime.signal.aborted) break;
      this.lastError = error === undefined ? 'connection ended' : describeFailure(error);
      const sessionLost = isSessionLost(error) || (cycle.signal.aborted && !this.session);
      // A lost session is re-initialized at once; a second loss in a row waits like any failure,
      // so a backend that forgets sessions immediately cannot make the broker spin.
      const delay =
        sessionLost && !this.previousFailureLostSession ? 0 : this.backoff.nextDelayMs();
      this.previousFailureLostSession = sessionLost;
      const credentialsRejected = error instanceof BackendError && error.credentialsRejected;
      this.nextRetryAt = Date.now() + delay;
      this.setState(credentialsRejected ? 'failed' : 'backing-off');
      this.options.logger.warn(
        `MCP backend ${this.backend.name}: ${this.lastError}; reconnecting in ${delay} ms`,
      );
      await sleep(delay, this.lifetime.signal);
    }
  }

  private async connectAndWatch(signal: AbortSignal): Promise<void> {
    this.setState('connecting');
    const session = await this.detect(signal);
    this.session = session;
    this.detectedEra = { era: session.era, at: Date.now() };
    await this.relist(session, signal, new Set());
    this.lastConnectedAt = Date.now();
    this.setState('connected');
    await this.events.watch(session, signal);
  }

  /**
   * Finds out which era the backend speaks: `server/discover` first, the legacy handshake as
   * the fallback (a live legacy session of an earlier attempt is kept when the backend is still
   * legacy; a re-initialization follows anyway if the backend forgot it).
   */
  private async detect(signal: AbortSignal): Promise<ActiveSession> {
    const probe = await this.modern.probe(this.nextRequestId++, signal);
    const previous = this.session;
    if (probe.era === 'unknown') {
      if (previous?.era === 'legacy') return previous;
      return this.initializeAfterAmbiguousProbe(probe.reason, probe.error, signal);
    }
    if (probe.era === 'modern') {
      if (previous?.era === 'legacy') {
        this.session = undefined;
        await this.legacy.endSession(previous);
      }
      return {
        era: 'modern',
        protocolVersion: MODERN_PROTOCOL_VERSION,
        capabilities: withoutTasks(probe.discovery.capabilities),
        ...(declaresTasksExtension(probe.discovery.capabilities) && { tasksExtension: true }),
      };
    }
    if (previous?.era === 'legacy') return previous;
    return this.initialize(signal);
  }

  /**
   * The event connection is up: the last attempt's error is over (until then `/status` keeps
   * it, e.g. while a retried stream is `opening`), and the stable period starts.
   */
  private eventConnectionUp() {
    this.lastError = undefined;
    this.startStablePeriod();
  }

  /**
   * The event connection is up: if it stays up for the stable period (run() cancels the timer
   * when the attempt ends), the connection was healthy and the next drop starts from
   * `initialDelay` again; a drop before that counts as one more failure.
   */
  private startStablePeriod() {
    clearTimeout(this.stableTimer);
    this.stableTimer = setTimeout(() => {
      this.stableTimer = undefined;
      this.backoff.reset();
      this.previousFailureLostSession = false;
    }, this.stablePeriodMs);
    this.stableTimer.unref?.();
  }

  /**
   * The legacy handshake after a `server/discover` answer that proved nothing (a server error,
   * no MCP message): its success makes the backend legacy. If it fails too, the attempt fails
   * with both answers (the legacy one decides the status, so rejected credentials still mark the
   * backend `failed`).
   */
  private async initializeAfterAmbiguousProbe(
    probeReason: string,
    probeError: BackendError,
    signal: AbortSignal,
  ): Promise<ActiveSession> {
    let session: ActiveSession;
    try {
      session = await this.initialize(signal);
    } catch (error) {
      let legacy: { detail: string; cause: BackendError };
      if (error instanceof BackendError) {
        legacy = { detail: error.detail, cause: error };
      } else if (error instanceof BackendRpcError) {
        legacy = {
          detail: `answered with error ${error.error.code}: ${error.error.message}`,
          cause: probeError,
        };
      } else {
        throw error; // an abort: not a verdict on the backend
      }
      const detail = `era detection failed: ${probeReason}; legacy initialize: ${legacy.detail}`;
      throw new BackendError(
        this.backend.name,
        legacy.cause.reason,
        `MCP server "${this.backend.name}" ${detail}`,
        {
          ...legacy.cause.options,
          statusDetail: detail,
        },
      );
    }
    this.options.logger.info(
      `MCP backend ${this.backend.name}: ${probeReason}; the legacy handshake succeeded, ` +
        `speaking ${session.protocolVersion}`,
    );
    return session;
  }

  private async initialize(signal: AbortSignal): Promise<ActiveSession> {
    // Declared so that backends which tailor their tools to the client list everything the
    // broker can relay to its own clients.
    const session = await this.legacy.open({ ...BROKER_CLIENT_CAPABILITIES }, [signal]);
    return { era: 'legacy', ...session };
  }

  private async listAll(
    session: ActiveSession,
    method: string,
    key: keyof BackendLists,
    signal: AbortSignal,
    ttls: BackendListTtls,
  ): Promise<Record<string, unknown>[]> {
    const list = await readPagedList(
      key,
      cursor =>
        this.requestOn(session, method, cursor === undefined ? undefined : { cursor }, {
          signals: [signal],
          // Declared so that backends which tailor their lists to the client list everything.
          clientCapabilities: { ...BROKER_CLIENT_CAPABILITIES },
        }),
      this.listLimits,
    );
    if (list.ttlMs !== undefined) ttls[key] = list.ttlMs;
    this.noteTruncation(key, list.truncated);
    return list.items;
  }

  /** Counts a cut list, warning when a list becomes cut (`/status` shows the cut ones). */
  private noteTruncation(key: keyof BackendLists, truncated: ListTruncation | undefined) {
    const before = this.truncations[key];
    if (truncated === undefined) {
      delete this.truncations[key];
      return;
    }
    this.truncations[key] = truncated;
    this.misbehaviours.record('truncatedLists');
    if (before !== truncated) {
      this.options.logger.warn(
        `MCP server "${this.backend.name}" ${describeTruncation(key, truncated, this.listLimits)}`,
      );
    }
  }

  private async relist(
    session: ActiveSession,
    signal: AbortSignal,
    eventKinds: ReadonlySet<ListKind>,
  ): Promise<void> {
    const caps = session.capabilities;
    const ttls: BackendListTtls = {};
    const [tools, resources, resourceTemplates, prompts] = await Promise.all([
      caps.tools !== undefined ? this.listAll(session, 'tools/list', 'tools', signal, ttls) : [],
      caps.resources !== undefined
        ? this.listAll(session, 'resources/list', 'resources', signal, ttls)
        : [],
      caps.resources !== undefined
        ? this.listAll(
            session,
            'resources/templates/list',
            'resourceTemplates',
            signal,
            ttls,
          ).catch(
            // Templates are optional even for servers with resources.
            (error: unknown) => {
              if (error instanceof BackendRpcError) return [];
              throw error;
            },
          )
        : [],
      caps.prompts !== undefined
        ? this.listAll(session, 'prompts/list', 'prompts', signal, ttls)
        : [],
    ]);
    this.ttls = ttls;
    const next: BackendLists = { tools, resources, resourceTemplates, prompts };
    const changedKinds = changedListKinds(this.lists, next);
    this.lists = next;
    this.options.onListsUpdated(this.backend.name, { changedKinds, eventKinds });
  }
}

/** True for the failure of a backend that no longer knows the broker's session. */
function isSessionLost(error: unknown): boolean {
  return error instanceof BackendError && error.reason === 'session-lost';
}
