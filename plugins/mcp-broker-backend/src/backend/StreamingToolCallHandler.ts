/*
 * The broker's ToolCallHandler: adapts the router's seam (src/types.ts) to the
 * ToolCallForwarder, the BackendSessionPool and the ElicitationIdMap. A client's response ends in
 * a domain outcome (delivered, unknown id, backend failed); the router decides the HTTP answer.
 *
 * Stateless (2026-07-28) callers go through the same forwarder: their backend sessions are pooled
 * per `ModernCaller.poolKey` (closed when idle, see IdleBackendSessions), their final response is
 * a `complete` result, and cancellation is the client closing the response stream (the signal),
 * which the forwarder turns into `notifications/cancelled` to the backend before it closes the
 * backend stream.
 *
 * The era of each backend comes from the broker's own connection (`backendSessions`): a call to
 * a 2026-07-28 backend is stateless (no backend session; see ToolCallForwarder), and a 2026-07-28
 * client's retry of such a backend's `input_required` is a new stateless call carrying the
 * backend's own `requestState` (unsealed from the broker's) and the client's `inputResponses`.
 */
import type {
  ClientEventStream,
  ClientNotificationContext,
  ModernToolCallContext,
  ClientResponseContext,
  ClientResponseOutcome,
  ToolCallContext,
  ToolCallHandler,
} from '../types';
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BrokerConfig } from '../config';
import { backendRemoved, toClientError } from './backendErrors';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import type { BackendChannels } from './backendChannels';
import {
  isPlainObject,
  jsonRpcError,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcMessage,
  type JsonRpcRequest,
} from '../protocol/jsonRpc';
import { relayedCapabilities } from '../protocol/capabilities';
import {
  completeResult,
  InputRetry,
  modernBackendError,
  modernErrorHttpStatus,
  readInputRetry,
} from '../protocol/modernResults';
import { MCP_NAME_SOURCE } from '../protocol/modernEra';
import { DEFAULT_KEEP_ALIVE_MS } from '../config';
import { logLevelAllows } from '../protocol/requestMetadata';
import { ElicitationIdMap, ElicitationIdStore } from './ElicitationIdMap';
import {
  DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
  IdleBackendSessions,
} from './IdleBackendSessions';
import {
  BackendServerRequest,
  ClientMessageSink,
  ForwardedToolCall,
  progressTokenOf,
  ToolCallForwarder,
} from './ToolCallForwarder';
import {
  OpenedRequestState,
  RequestStateBinding,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import {
  MemoryRequestStateNonceStore,
  RequestStateNonceStore,
} from '../inputRequests/requestStateNonces';
import { CancellationRelay, type CancellationStore } from './CancellationRelay';

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

/** How often expired gateway ids and requestState nonces are swept (refused when used anyway). */
const ELICITATION_SWEEP_INTERVAL_MS = 60_000;

/** The broker's ToolCallHandler; build it with {@link createStreamingToolCallHandler}. */
export class StreamingToolCallHandler implements ToolCallHandler {
  constructor(
    /** Exposed for status reporting and tests. */
    readonly forwarder: ToolCallForwarder,
    readonly elicitations: ElicitationIdMap,
    /** Closes the backend sessions of stateless callers once they are idle. */
    readonly statelessSessions: IdleBackendSessions,
    private readonly logger: LoggerService,
    /** The live backend by name, with its channels and detected era. */
    private readonly backendOf: (backend: string) => BackendChannels | undefined,
    /** Ends the backend sessions of a client session (or stateless caller) with every backend. */
    private readonly closeSessionsOf: (owner: string) => Promise<void>,
    /**
     * How long a 2026-07-28 client's call may stay silent before its response stream opens
     * anyway (a keep-alive is due: `mcpBroker.keepAlive`).
     */
    private readonly keepAliveMs: number = DEFAULT_KEEP_ALIVE_MS,
    /** Passes cancellations on to the replica holding the call (shared store only). */
    private readonly cancellationRelay?: CancellationRelay,
  ) {}

  async handleToolCall(context: ToolCallContext): Promise<void> {
    const { clientSession } = context;
    await this.forwardOnStream(
      context,
      {
        clientSessionId: clientSession.id,
        clientSession: true,
        declaredCapabilities: clientSession.clientCapabilities,
      },
      // A prompt or resource is answered with plain JSON, as over the broker's own connection,
      // unless the backend asks for input (then the requests need the stream).
      context.request.method === 'tools/call'
        ? clientStreamSink(context)
        : clientStreamSink(context, undefined, { lazy: { httpStatus: () => 200 } }),
    );
  }

  async handleModernToolCall(context: ModernToolCallContext): Promise<void> {
    const { caller, backend, request } = context;
    const params = request.params ?? {};
    const retry = readInputRetry(params);
    if ('invalid' in retry) {
      const { id } = request;
      context.reply.json(jsonRpcError(id, JsonRpcErrorCode.InvalidParams, retry.invalid), 400);
      return;
    }
    // The state is bound to the tool (prompt, resource) as the backend knows it (the prefix
    // may change with configuration; the backend and its tool name do not, for a held call).
    const binding = {
      principal: caller.principal,
      method: request.method,
      name: `${backend.name}/${String(params[MCP_NAME_SOURCE[request.method] ?? 'name'])}`,
      arguments: params.arguments,
    };
    // The stream opens only when something is streamed: a refused retry, and a call answered
    // at once (e.g. the backend's -32021), are plain JSON with their own HTTP status.
    const sink = clientStreamSink(
      context,
      message =>
        message.method === 'notifications/message' &&
        !logLevelAllows(caller.logLevel, (message.params as { level?: unknown })?.level)
          ? undefined
          : asCompleteResponse(message, request, context.shapeResult),
      {
        lazy: {
          httpStatus: message =>
            isPlainObject(message.error) ? modernErrorHttpStatus(message.error) : 200,
          openAfterMs: this.keepAliveMs,
        },
      },
    );
    if (retry.requestState !== undefined) {
      await this.resumeModernToolCall(context, binding, retry, sink);
      return;
    }
    // The backend sessions of the caller stay open while the call runs, also while it is held
    // (then the forwarder releases them when the call ends: onCallEnd).
    const release = this.statelessSessions.begin(caller.poolKey);
    const inputRequired = this.forwarder.acceptsInputRequired;
    try {
      await this.forwardOnStream(
        context,
        {
          clientSessionId: caller.poolKey,
          declaredCapabilities: caller.clientCapabilities,
          // A 2026-07-28 backend gets `inputResponses` sent without a state as they are (its
          // own keys); a 2025 one knows neither member.
          params:
            this.backendOf(context.backend.name)?.era === 'modern'
              ? params
              : withoutInputRetry(params),
          ...(inputRequired
            ? {
                inputRequired: { declaredCapabilities: caller.clientCapabilities, binding },
                onCallEnd: release,
              }
            : { serverRequests: serverRequest => this.refuseServerRequest(serverRequest) }),
        },
        sink,
      );
    } finally {
      if (!inputRequired) release();
    }
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
      const stateless = await this.forwarder.resume(
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
      if (!(error instanceof RequestStateRefusal) || context.reply.answered) throw error;
      const refusal = error.toModernError();
      context.reply.json(
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
    const release = this.statelessSessions.begin(caller.poolKey);
    try {
      await this.forwardOnStream(
        context,
        {
          clientSessionId: caller.poolKey,
          declaredCapabilities: caller.clientCapabilities,
          backendEra: 'modern',
          params: {
            ...params,
            ...(retry.inputResponses === undefined ? {} : { inputResponses: retry.inputResponses }),
            ...(opened.backendRequestState === undefined
              ? {}
              : { requestState: opened.backendRequestState }),
          },
          inputRequired: { declaredCapabilities: caller.clientCapabilities, binding },
        },
        sink,
      );
    } finally {
      release();
    }
  }

  /** Forwards the call, writing what the backend sends to `sink` (the client's stream). */
  private forwardOnStream(
    context: Omit<ToolCallContext, 'clientSession'>,
    caller: Pick<
      ForwardedToolCall,
      | 'clientSessionId'
      | 'clientSession'
      | 'serverRequests'
      | 'inputRequired'
      | 'onCallEnd'
      | 'backendEra'
    > & {
      declaredCapabilities: Readonly<Record<string, unknown>>;
      /** The params sent to the backend, when not the request's own. */
      params?: Record<string, unknown>;
    },
    sink: ClientMessageSink,
  ): Promise<void> {
    const { request } = context;
    const { declaredCapabilities, params, ...rest } = caller;
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
    return this.forwarder.forward(
      {
        backendEra: backend.era,
        ...rest,
        ...(request.method === 'tools/call' ? {} : { method: request.method }),
        clientCapabilities: relayedCapabilities(declaredCapabilities),
        backend,
        clientRequestId: request.id,
        params: params ?? request.params ?? {},
      },
      sink,
    );
  }

  /**
   * A stateless client cannot be asked anything on its call's stream (2026-07-28 has no
   * server-to-client requests): the backend is told at once that the method is not available,
   * so its tool goes on (or fails) instead of waiting for an answer that never comes.
   */
  private async refuseServerRequest(request: BackendServerRequest): Promise<void> {
    try {
      await request.respond({
        error: {
          code: JsonRpcErrorCode.MethodNotFound,
          message:
            `${request.method.slice(0, 100)} is not available: the client of this call speaks ` +
            'MCP 2026-07-28, to which the broker does not relay server-to-client requests',
        },
      });
    } catch (error) {
      this.logger.debug(`Could not refuse a backend's ${request.method.slice(0, 100)}: ${error}`);
    }
  }

  handleClientResponse(context: ClientResponseContext): Promise<ClientResponseOutcome> {
    return this.forwarder.answer(context.clientSession.id, context.message);
  }

  async handleClientNotification(context: ClientNotificationContext): Promise<void> {
    if (context.notification.method !== 'notifications/cancelled') return;
    const { params } = context.notification;
    if (this.forwarder.cancel(context.clientSession.id, params)) return;
    // Not in flight here: with a shared store, maybe on another replica (CancellationRelay).
    const requestId = params?.requestId;
    if (
      this.cancellationRelay &&
      (typeof requestId === 'string' || typeof requestId === 'number')
    ) {
      const reason = typeof params?.reason === 'string' ? params.reason : undefined;
      await this.cancellationRelay.record(context.clientSession.id, requestId, reason);
    }
  }

  closeClientSession(sessionId: string): Promise<void> {
    return this.forwarder.closeClientSession(sessionId);
  }

  closeBackendSessionsOf(sessionId: string): Promise<void> {
    return this.closeSessionsOf(sessionId);
  }

  async removeBackend(name: string): Promise<void> {
    this.forwarder.removeBackend(name);
  }

  drain(deadlineMs: number): Promise<void> {
    return this.forwarder.drain(deadlineMs);
  }

  close(): Promise<void> {
    this.statelessSessions.stop();
    this.cancellationRelay?.stop();
    return this.forwarder.close();
  }
}

/** What seals the `requestState` of 2026-07-28 callers (see RequestStateSealer). */
export interface RequestStateOptions {
  /** The HMAC key, the same on every replica (see requestStateKey.ts). */
  key: Buffer;
  /** Used nonces; in memory unless shared by several replicas. */
  nonces?: RequestStateNonceStore;
  /** Held calls shared by several replicas (a retry may land on any of them). */
  heldCalls?: HeldCallStore;
}

/**
 * Builds the broker's ToolCallHandler (a `ToolCallHandlerFactory`). `store` replaces the
 * in-memory elicitation id store, e.g. with a shared one for several replicas;
 * `statelessSessionIdleMs` the idle time after which stateless callers' backend sessions close.
 * Without `requestState`, 2026-07-28 callers cannot be asked for input (their backends get an
 * error).
 */
export function createStreamingToolCallHandler(
  deps: ToolCallHandlerDeps,
  options: {
    store?: ElicitationIdStore;
    statelessSessionIdleMs?: number;
    requestState?: RequestStateOptions;
    /** Shared by every replica: cancellations given on another replica reach the call here. */
    cancellations?: CancellationStore;
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
      key: options.requestState.key,
      ttlMs: config.elicitationTtlMs,
      nonces: nonces!,
    });
  elicitations.startSweeping(
    ELICITATION_SWEEP_INTERVAL_MS,
    error =>
      logger.warn(
        `Could not sweep expired elicitation ids, requestState nonces or cancellations: ${error}`,
      ),
    [nonces, options.requestState?.heldCalls, options.cancellations].flatMap(store =>
      store ? [(now: number) => store.deleteExpired(now)] : [],
    ),
  );
  const cancellationRelay =
    options.cancellations && new CancellationRelay({ store: options.cancellations, logger });
  const forwarder = new ToolCallForwarder({
    logger,
    cancellationRelay,
    elicitations,
    // Answers are routed by backend name through the live server set (servers come and go at
    // runtime); a backend removed since then has no channels.
    backendOf: name => deps.backends.get(name),
    closeSessionsOf,
    toolCallTimeoutMs: config.toolCallTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    paramHeadersOf: deps.paramHeadersOf,
    requestStates,
    heldCalls: options.requestState?.heldCalls,
  });
  const statelessSessions = new IdleBackendSessions(closeSessionsOf, {
    idleMs: options.statelessSessionIdleMs ?? DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
    logger,
  });
  statelessSessions.start();
  return new StreamingToolCallHandler(
    forwarder,
    elicitations,
    statelessSessions,
    logger,
    name => deps.backends.get(name),
    closeSessionsOf,
    config.keepAliveMs,
    cancellationRelay,
  );
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

/** When a call's response stream opens (see {@link clientStreamSink}). */
interface LazyStream {
  /** The HTTP status of a final response answered as plain JSON. */
  httpStatus(response: Record<string, unknown>): number;
  /** Open the stream anyway after this long without a message (keep-alives are due). */
  openAfterMs?: number;
}

/**
 * The client's side of a call, each message shaped by `shape` (undefined drops it): its
 * response stream, opened at once, or with `lazy` only when a message other than the final
 * response is to go out (progress, a request for input, a log line) or after `openAfterMs` of
 * silence. A call whose only message is its final response is answered as plain JSON with
 * `lazy.httpStatus` (the stream is not needed, and the status can still say what went wrong).
 */
function clientStreamSink(
  context: Omit<ToolCallContext, 'clientSession'>,
  shape: (message: Record<string, unknown>) => Record<string, unknown> | undefined = message =>
    message,
  options: { lazy?: LazyStream } = {},
): ClientMessageSink {
  const lazy = options.lazy;
  let stream: ClientEventStream | undefined = lazy ? undefined : context.openEventStream();
  let answered = false;
  let silence: NodeJS.Timeout | undefined;
  const open = () => {
    clearTimeout(silence);
    return (stream ??= context.openEventStream());
  };
  if (lazy?.openAfterMs !== undefined) {
    silence = setTimeout(() => {
      if (!answered && !context.reply.answered) open();
    }, lazy.openAfterMs);
    silence.unref();
  }
  return {
    send: message => {
      const shaped = shape(message);
      if (shaped === undefined) return !(stream?.closed ?? answered);
      if (answered) return false;
      if (lazy && stream === undefined && isFinalResponse(shaped)) {
        clearTimeout(silence);
        answered = true;
        if (context.reply.answered) return false;
        context.reply.json(shaped, lazy.httpStatus(shaped));
        return true;
      }
      return open().send(shaped as unknown as JsonRpcMessage);
    },
    end: () => {
      clearTimeout(silence);
      if (answered) return;
      // A lazy call that ends without any message to a client that is gone writes nothing;
      // to one still there, it ends as it always did (an empty stream).
      if (lazy && stream === undefined && context.reply.answered) return;
      open().close();
    },
    clientGone: context.signal,
  };
}

/** A JSON-RPC response (not a request with a gateway id, not a notification). */
function isFinalResponse(message: Record<string, unknown>): boolean {
  return message.id !== undefined && message.method === undefined;
}

/** The call's params without the retry members (a 2025-era backend knows neither). */
function withoutInputRetry(params: Record<string, unknown>): Record<string, unknown> {
  const { inputResponses: _responses, requestState: _state, ...rest } = params;
  return rest;
}
