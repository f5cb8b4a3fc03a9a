/*
 * The broker's ToolCallHandler: adapts the router's seam (src/types.ts) to ToolCalls (the calls
 * in flight, their legs and the answer router). A client's response ends in a domain outcome
 * (delivered, unknown id, backend failed); the router decides the HTTP answer.
 *
 * Stateless (2026-07-28) callers go through the same calls: their backend sessions are held per
 * `ModernCaller.poolKey` (closed when idle, see IdleBackendSessions), their final response is a
 * `complete` result, and cancellation is the client closing the response stream (the signal),
 * which the call turns into `notifications/cancelled` to the backend before it closes the
 * backend stream.
 *
 * The era of each backend comes from the broker's own connection (`backends`): a call to a
 * 2026-07-28 backend is stateless (no backend session; see ModernLeg), and a 2026-07-28 client's
 * retry of such a backend's `input_required` is a new stateless call carrying the backend's own
 * `requestState` (unsealed from the broker's) and the client's `inputResponses`.
 */
import type {
  ClientNotificationContext,
  ModernCaller,
  ModernToolCallContext,
  ClientResponseContext,
  ClientResponseOutcome,
  ToolCallContext,
  ToolCallHandler,
} from '../types';
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerConfig } from '../config';
import { backendRemoved, toClientError } from '../backend/backendErrors';
import { personalEndpointOf } from '../backend/backendTransport';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import type { BackendChannels } from '../backend/backendChannels';
import {
  isPlainObject,
  jsonRpcError,
  progressTokenOf,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import { relayedCapabilities } from '../protocol/capabilities';
import type { ProtocolEra } from '../protocol/modernEra';
import {
  completeResult,
  InputRetry,
  modernBackendError,
  modernErrorHttpStatus,
  readInputRetry,
} from '../protocol/modernResults';
import { mcpNameSource } from '../protocol/mcpMethods';
import { logLevelAllows } from '../protocol/requestMetadata';
import { ElicitationIdMap, ElicitationIdStore } from './ElicitationIdMap';
import type { UrlElicitationPolicy } from './urlElicitations';
import {
  DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
  IdleBackendSessions,
} from './IdleBackendSessions';
import type { ClientMessageSink } from './callTypes';
import type { CallClient } from './ToolCall';
import { ToolCalls } from './ToolCalls';
import {
  OpenedRequestState,
  RequestStateBinding,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import type { HmacKeys } from '../inputRequests/requestStateKey';
import {
  MemoryRequestStateNonceStore,
  RequestStateNonceStore,
} from '../inputRequests/requestStateNonces';
import { ExpirySweeper, type ExpiringRecords } from '../replicas/ExpirySweeper';
import { SignalBus, type SignalStore } from '../replicas/SignalBus';
import type { BrokerTelemetry } from '../telemetry/BrokerTelemetry';

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

/** What a {@link StreamingToolCallHandler} is made of. */
export interface StreamingToolCallHandlerParts {
  /** The calls in flight on this replica. */
  calls: ToolCalls;
  /** Closes the backend sessions of stateless callers once they are idle. */
  statelessSessions: IdleBackendSessions;
  /** The live backend by name, with its channels and detected era. */
  backendOf: (backend: string) => BackendChannels | undefined;
  /** Ends the backend sessions of a client session (or stateless caller) with every backend. */
  closeSessionsOf: (owner: string) => Promise<void>;
  /** Sweeps the expiring records of this replica (stopped on close). */
  sweeper?: ExpirySweeper;
}

/** The broker's ToolCallHandler; build it with {@link createStreamingToolCallHandler}. */
export class StreamingToolCallHandler implements ToolCallHandler {
  /** The calls in flight (status and tests). */
  readonly calls: ToolCalls;
  private readonly statelessSessions: IdleBackendSessions;
  private readonly backendOf: (backend: string) => BackendChannels | undefined;
  private readonly closeSessionsOf: (owner: string) => Promise<void>;
  private readonly sweeper: ExpirySweeper | undefined;

  constructor(parts: StreamingToolCallHandlerParts) {
    this.calls = parts.calls;
    this.statelessSessions = parts.statelessSessions;
    this.backendOf = parts.backendOf;
    this.closeSessionsOf = parts.closeSessionsOf;
    this.sweeper = parts.sweeper;
  }

  async handleToolCall(context: ToolCallContext): Promise<void> {
    const { clientSession } = context;
    const client = () =>
      this.calls.sessionClient(
        clientSession.id,
        relayedCapabilities(clientSession.clientCapabilities),
      );
    await this.forwardOnStream(context, client, responseSink(context));
  }

  async handleModernToolCall(context: ModernToolCallContext): Promise<void> {
    const { caller, backend, request } = context;
    const params = request.params ?? {};
    const retry = readInputRetry(params);
    if ('invalid' in retry) {
      const { id } = request;
      context.response.finish(jsonRpcError(id, JsonRpcErrorCode.InvalidParams, retry.invalid), 400);
      return;
    }
    // The state is bound to the tool (prompt, resource) as the backend knows it (the prefix
    // may change with configuration; the backend and its tool name do not, for a held call).
    const binding = {
      principal: caller.principal,
      method: request.method,
      name: `${backend.name}/${String(params[mcpNameSource(request.method) ?? 'name'])}`,
      arguments: params.arguments,
      // Issued on one curated endpoint, good on that one only (spec §13).
      ...(caller.endpoint === undefined ? {} : { endpoint: caller.endpoint }),
    };
    // A call answered at once (e.g. the backend's -32021) is plain JSON with its own HTTP
    // status (the router's writer streams only when something else comes first).
    const sink = responseSink(
      context,
      message =>
        message.method === 'notifications/message' &&
        !logLevelAllows(caller.logLevel, (message.params as { level?: unknown })?.level)
          ? undefined
          : asCompleteResponse(message, request, context.shapeResult),
      message => (isPlainObject(message.error) ? modernErrorHttpStatus(message.error) : 200),
    );
    if (retry.requestState !== undefined) {
      await this.resumeModernToolCall(context, binding, retry, sink);
      return;
    }
    // A 2026-07-28 backend gets `inputResponses` sent without a state as they are (its own
    // keys); a 2025 one knows neither member.
    const forwarded =
      this.backendOf(context.backend.name)?.era === 'modern' ? params : withoutInputRetry(params);
    await this.forwardOnStream(context, () => this.statelessClient(caller, binding), sink, {
      params: forwarded,
    });
  }

  /**
   * The client half of a stateless caller's call. Its backend sessions stay open while the call
   * runs, also while it is held: the client half releases them when the backend call is over.
   */
  private statelessClient(caller: ModernCaller, binding: RequestStateBinding): CallClient {
    return this.calls.statelessClient({
      owner: caller.poolKey,
      capabilities: relayedCapabilities(caller.clientCapabilities),
      caller: { declaredCapabilities: caller.clientCapabilities, binding },
      onEnd: this.statelessSessions.begin(caller.poolKey),
    });
  }

  /** A 2026-07-28 client's retry with `requestState`: resumes its held call (spec §9). */
  private async resumeModernToolCall(
    context: ModernToolCallContext,
    binding: RequestStateBinding,
    retry: InputRetry,
    sink: ClientMessageSink,
  ): Promise<void> {
    const { request } = context;
    try {
      const stateless = await this.calls.resume(
        {
          binding,
          requestState: retry.requestState!,
          inputResponses: retry.inputResponses ?? {},
          clientRequestId: request.id,
          progressToken: progressTokenOf(request.params ?? {}),
        },
        sink,
      );
      if (stateless !== undefined)
        await this.retryStateless(context, binding, retry, stateless, sink);
    } catch (error) {
      if (!(error instanceof RequestStateRefusal) || context.response.answered) throw error;
      const refusal = error.toModernError();
      context.response.finish(
        jsonRpcError(request.id, refusal.code, refusal.message, refusal.data),
        refusal.httpStatus,
      );
    }
  }

  /**
   * A 2026-07-28 client's retry of a 2026-07-28 backend's `input_required`: a new stateless call
   * with the client's `inputResponses` (the backend's own keys) and the backend's `requestState`
   * byte for byte. The binding names the backend, so the retry reaches the one that asked.
   */
  private async retryStateless(
    context: ModernToolCallContext,
    binding: RequestStateBinding,
    retry: InputRetry,
    opened: OpenedRequestState,
    sink: ClientMessageSink,
  ): Promise<void> {
    const { caller, backend, request } = context;
    if (opened.backend !== backend.name) throw new RequestStateRefusal('foreign-request');
    const params = withoutInputRetry(request.params ?? {});
    await this.forwardOnStream(context, () => this.statelessClient(caller, binding), sink, {
      backendEra: 'modern',
      params: {
        ...params,
        ...(retry.inputResponses === undefined ? {} : { inputResponses: retry.inputResponses }),
        ...(opened.backendRequestState === undefined
          ? {}
          : { requestState: opened.backendRequestState }),
      },
    });
  }

  /**
   * Forwards the call of the client half `clientOf` makes (once the backend is known to be
   * there), writing what the backend sends to `sink` (the client's
   * stream); `options.params` are the params sent to the backend, when not the request's own.
   */
  private forwardOnStream(
    context: Omit<ToolCallContext, 'clientSession'>,
    clientOf: () => CallClient,
    sink: ClientMessageSink,
    options: { params?: Record<string, unknown>; backendEra?: ProtocolEra } = {},
  ): Promise<void> {
    const { request } = context;
    const backend = this.backendOf(context.backend.name);
    if (backend === undefined) {
      // Removed from the configuration between the routing and now.
      sink.send({
        jsonrpc: '2.0',
        id: request.id,
        error: toClientError(backendRemoved(context.backend.name)),
      });
      sink.end();
      return Promise.resolve();
    }
    return this.calls.forward(
      {
        client: clientOf(),
        ...(options.backendEra === undefined ? {} : { backendEra: options.backendEra }),
        ...(request.method === 'tools/call' ? {} : { method: request.method }),
        backend,
        ...(context.personalHeaders === undefined
          ? {}
          : {
              personalEndpoint: personalEndpointOf(backend.endpoint, context.personalHeaders),
            }),
        clientRequestId: request.id,
        params: options.params ?? request.params ?? {},
        ...(context.telemetry === undefined ? {} : { telemetry: context.telemetry }),
      },
      sink,
    );
  }

  handleClientResponse(context: ClientResponseContext): Promise<ClientResponseOutcome> {
    return this.calls.answer(context.clientSession.id, context.message, context.personalHeaders);
  }

  async handleClientNotification(context: ClientNotificationContext): Promise<void> {
    if (context.notification.method !== 'notifications/cancelled') return;
    const { params } = context.notification;
    if (this.calls.cancel(context.clientSession.id, params)) return;
    // Not in flight here: with a shared store, maybe on another replica.
    await this.calls.cancelElsewhere(context.clientSession.id, params);
  }

  closeClientSession(sessionId: string): Promise<void> {
    return this.calls.closeClientSession(sessionId);
  }

  announceSessionEnd(sessionId: string): Promise<void> {
    return this.calls.announceSessionEnd(sessionId);
  }

  closeBackendSessionsOf(sessionId: string): Promise<void> {
    return this.closeSessionsOf(sessionId);
  }

  async removeBackend(name: string): Promise<void> {
    this.calls.removeBackend(name);
  }

  drain(deadlineMs: number): Promise<void> {
    return this.calls.drain(deadlineMs);
  }

  close(): Promise<void> {
    this.statelessSessions.stop();
    this.sweeper?.stop();
    return this.calls.close();
  }
}

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
    // Answers are routed by backend name through the live server set (servers come and go at
    // runtime); a backend removed since then has no channels.
    backendOf: name => deps.backends.get(name),
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
  return new StreamingToolCallHandler({
    calls,
    statelessSessions,
    backendOf: name => deps.backends.get(name),
    closeSessionsOf,
    sweeper,
  });
}

/**
 * The call's final response as a 2026-07-28 client is to see it: a result shaped by `shape`
 * (default: `complete`; an `input_required` one stays as it is), an error as that era words it
 * (modernBackendError); anything else unchanged.
 */
function asCompleteResponse(
  message: Record<string, unknown>,
  request: JsonRpcRequest,
  shape: (result: Record<string, unknown>) => Record<string, unknown> = completeResult,
): Record<string, unknown> {
  if (message.id !== request.id) return message;
  if (isPlainObject(message.error)) {
    const error = message.error as unknown as JsonRpcErrorObject;
    return { ...message, error: modernBackendError(request.method, request.params ?? {}, error) };
  }
  if (!isPlainObject(message.result)) return message;
  if (message.result.resultType === 'input_required') return message;
  return { ...message, result: shape(message.result) };
}

/**
 * The client's side of a call over its answer's writer: each message shaped by `shape`
 * (undefined drops it); the final response goes with the HTTP status `httpStatusOf` gives it,
 * should the writer answer it as plain JSON.
 */
function responseSink(
  context: Pick<ToolCallContext, 'response' | 'signal'>,
  shape: (message: Record<string, unknown>) => Record<string, unknown> | undefined = message =>
    message,
  httpStatusOf: (response: Record<string, unknown>) => number = () => 200,
): ClientMessageSink {
  const { response } = context;
  return {
    send: message => {
      const shaped = shape(message) as unknown as JsonRpcMessage | undefined;
      if (shaped === undefined) return true;
      return isFinalResponse(shaped)
        ? response.finish(shaped, httpStatusOf(shaped as unknown as Record<string, unknown>))
        : response.send(shaped);
    },
    end: () => response.end(),
    clientGone: context.signal,
  };
}

/** A JSON-RPC response (not a request with a gateway id, not a notification). */
function isFinalResponse(message: JsonRpcMessage): boolean {
  return 'id' in message && !('method' in message);
}

/** The call's params without the retry members (a 2025-era backend knows neither). */
function withoutInputRetry(params: Record<string, unknown>): Record<string, unknown> {
  const { inputResponses: _responses, requestState: _state, ...rest } = params;
  return rest;
}
