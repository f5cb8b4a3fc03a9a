/*
 * The composition root of the call machinery: builds the broker's ToolCallHandler from what the
 * broker gives it (its config, the live backends, the tools' `x-mcp-header` declarations) and the
 * plugin's options (shared stores, `requestState` keys, telemetry, the URL elicitation policy).
 * Wiring only: every behaviour lives in the objects it builds. It owns what must be stopped —
 * the expiry sweeper, the idle stateless sessions, the bus — through the handler's `close`.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerConfig } from '../config';
import type { BackendChannels } from '../backend/backendChannels';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import type { HmacKeys } from '../inputRequests/requestStateKey';
import {
  MemoryRequestStateNonceStore,
  type RequestStateNonceStore,
} from '../inputRequests/requestStateNonces';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import { ExpirySweeper, type ExpiringRecords } from '../replicas/ExpirySweeper';
import { SignalBus, type SignalStore } from '../replicas/SignalBus';
import type { BrokerTelemetry } from '../telemetry/BrokerTelemetry';
import type { ToolCallHandler } from '../types';
import { ElicitationIdMap, type ElicitationIdStore } from './ElicitationIdMap';
import {
  DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
  IdleBackendSessions,
} from './IdleBackendSessions';
import { RoutedCalls } from './RoutedCalls';
import { StatelessCalls } from './StatelessCalls';
import { StreamingToolCallHandler } from './StreamingToolCallHandler';
import { ToolCalls } from './ToolCalls';
import type { UrlElicitationPolicy } from './urlElicitations';

/** What a ToolCallHandler may use from the broker. */
export interface ToolCallHandlerDeps {
  readonly config: BrokerConfig;
  readonly logger: LoggerService;
  /**
   * The live backends by name, each with the channels of its connection (the clients' calls go
   * over the same channels as the broker's own connection) and its detected era. They change at
   * runtime (config reload, Kubernetes discovery): look a backend up when it is needed, e.g.
   * when a client answers an elicitation.
   */
  readonly backends: {
    get(name: string): BackendChannels | undefined;
    all(): Iterable<BackendChannels>;
  };
  /**
   * The `x-mcp-header` declarations of a backend's tool (by the backend's own tool name), read
   * when its list was loaded; empty when it has none. A call to a 2026-07-28 backend mirrors
   * these arguments into `Mcp-Param-*` headers.
   */
  readonly paramHeadersOf: (backend: string, tool: string) => readonly ParamHeaderDeclaration[];
}

/** Builds the ToolCallHandler the broker uses (see `plugin.ts`). */
export type ToolCallHandlerFactory = (deps: ToolCallHandlerDeps) => ToolCallHandler;

/** What seals the `requestState` of 2026-07-28 callers (see RequestStateSealer). */
export interface RequestStateOptions {
  /** The HMAC keys, the same on every replica (see requestStateKey.ts). */
  keys: HmacKeys;
  /** Used nonces; in memory unless shared by several replicas. */
  nonces?: RequestStateNonceStore;
}

/** What several replicas share (`mcpBroker.sessionStore: database`). */
export interface SharedCallStores {
  /** Held rounds: a retry, or an answer, may land on any replica. */
  heldCalls: HeldCallStore;
  /** The signals between replicas: cancellations, answers, relayed rounds, session ends. */
  signals: SignalStore;
}

/**
 * Builds the broker's ToolCallHandler (a `ToolCallHandlerFactory`). `store` replaces the
 * in-memory elicitation id store, e.g. with a shared one for several replicas;
 * `statelessSessionIdleMs` the idle time after which stateless callers' backend sessions close.
 * Without `requestState`, 2026-07-28 callers cannot be asked for input (their backends get an
 * error); without `shared`, everything stays on this replica.
 */
export function createStreamingToolCallHandler(
  deps: ToolCallHandlerDeps,
  options: {
    store?: ElicitationIdStore;
    statelessSessionIdleMs?: number;
    requestState?: RequestStateOptions;
    shared?: SharedCallStores;
    /** Counts the clients' cancellations passed on to backends. */
    telemetry?: BrokerTelemetry;
    /** What a backend's URL elicitation may point at; absent: unchecked (tests of other things). */
    urlElicitations?: UrlElicitationPolicy;
  } = {},
): StreamingToolCallHandler {
  const { config, logger } = deps;
  // Answers and calls find backends by name through the live server set (servers come and go
  // at runtime); a backend removed since has no channels.
  const backendOf = (name: string) => deps.backends.get(name);
  const closeSessionsOf = async (owner: string) => {
    await Promise.all(
      [...deps.backends.all()].map(backend => backend.legacy.closeSessionOf(owner)),
    );
  };
  const elicitations = new ElicitationIdMap({
    store: options.store,
    ttlMs: config.elicitationTtlMs,
  });
  const nonces = options.requestState
    ? (options.requestState.nonces ?? new MemoryRequestStateNonceStore())
    : undefined;
  const requestStates =
    options.requestState &&
    new RequestStateSealer({
      keys: options.requestState.keys,
      ttlMs: config.elicitationTtlMs,
      nonces: nonces!,
    });
  const { shared } = options;
  const expiring: Array<ExpiringRecords | undefined> = [
    elicitations,
    nonces,
    shared?.heldCalls,
    shared?.signals,
  ];
  const sweeper = new ExpirySweeper(
    expiring.filter((store): store is ExpiringRecords => store !== undefined),
    error =>
      logger.warn(
        `Could not sweep expired elicitation ids, requestState nonces, held rounds or signals: ${error}`,
      ),
  );
  sweeper.start();
  const calls = new ToolCalls({
    logger,
    elicitations,
    backendOf,
    closeSessionsOf,
    toolCallTimeoutMs: config.toolCallTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    paramHeadersOf: deps.paramHeadersOf,
    requestStates,
    telemetry: options.telemetry,
    urlElicitations: options.urlElicitations,
    shared: shared && {
      store: shared.heldCalls,
      bus: new SignalBus({ store: shared.signals, logger }),
    },
  });
  const statelessSessions = new IdleBackendSessions(closeSessionsOf, {
    idleMs: options.statelessSessionIdleMs ?? DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
    logger,
  });
  statelessSessions.start();
  const routed = new RoutedCalls(calls, backendOf);
  return new StreamingToolCallHandler({
    calls,
    routed,
    stateless: new StatelessCalls({ calls, routed, statelessSessions, backendOf }),
    closeSessionsOf,
    ...(requestStates === undefined ? {} : { requestStates }),
    stoppables: [statelessSessions, sweeper],
  });
}
