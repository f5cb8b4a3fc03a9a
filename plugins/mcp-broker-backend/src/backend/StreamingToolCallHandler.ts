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
 */
import type {
  ClientNotificationContext,
  ModernToolCallContext,
  ClientResponseContext,
  ClientResponseOutcome,
  ToolCallContext,
  ToolCallHandler,
  ToolCallHandlerDeps,
} from '../types';
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcId,
  type JsonRpcMessage,
} from '../protocol/jsonRpc';
import { relayedCapabilities } from '../protocol/capabilities';
import { completeResult } from '../protocol/modernResults';
import { BackendSessionPool } from './BackendSessionPool';
import { ElicitationIdMap, ElicitationIdStore } from './ElicitationIdMap';
import {
  DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
  IdleBackendSessions,
} from './IdleBackendSessions';
import { BackendServerRequest, ForwardedToolCall, ToolCallForwarder } from './ToolCallForwarder';
import type { BackendEndpoint } from './backendTransport';

/** How often expired gateway ids are swept (they are refused at claim time regardless). */
const ELICITATION_SWEEP_INTERVAL_MS = 60_000;

/** The broker's ToolCallHandler; build it with {@link createStreamingToolCallHandler}. */
export class StreamingToolCallHandler implements ToolCallHandler {
  constructor(
    /** Exposed for status reporting and tests. */
    readonly forwarder: ToolCallForwarder,
    readonly pool: BackendSessionPool,
    readonly elicitations: ElicitationIdMap,
    /** Closes the backend sessions of stateless callers once they are idle. */
    readonly statelessSessions: IdleBackendSessions,
    private readonly logger: LoggerService,
  ) {}

  async handleToolCall(context: ToolCallContext): Promise<void> {
    const { clientSession } = context;
    await this.forwardOnStream(context, {
      clientSessionId: clientSession.id,
      declaredCapabilities: clientSession.clientCapabilities,
    });
  }

  async handleModernToolCall(context: ModernToolCallContext): Promise<void> {
    const { caller, request } = context;
    const release = this.statelessSessions.begin(caller.poolKey);
    try {
      await this.forwardOnStream(
        context,
        {
          clientSessionId: caller.poolKey,
          declaredCapabilities: caller.clientCapabilities,
          // SEAM(input-required): a legacy backend's elicitation/sampling/roots request during a
          // stateless call becomes an input_required result here; until then it is refused.
          serverRequests: serverRequest => this.refuseServerRequest(serverRequest),
        },
        message => asCompleteResponse(message, request.id),
      );
    } finally {
      release();
    }
  }

  /** Forwards the call, streaming what the backend sends (shaped by `shape`) to the client. */
  private forwardOnStream(
    context: Omit<ToolCallContext, 'clientSession'>,
    caller: Pick<ForwardedToolCall, 'clientSessionId' | 'serverRequests'> & {
      declaredCapabilities: Readonly<Record<string, unknown>>;
    },
    shape: (message: Record<string, unknown>) => Record<string, unknown> = message => message,
  ): Promise<void> {
    const { backend, request } = context;
    const stream = context.openEventStream();
    return this.forwarder.forward(
      {
        clientSessionId: caller.clientSessionId,
        clientCapabilities: relayedCapabilities(caller.declaredCapabilities),
        endpoint: endpointOf(backend),
        clientRequestId: request.id,
        params: request.params ?? {},
        serverRequests: caller.serverRequests,
      },
      {
        send: message => stream.send(shape(message) as unknown as JsonRpcMessage),
        end: () => stream.close(),
        clientGone: context.signal,
      },
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
    if (context.notification.method === 'notifications/cancelled') {
      this.forwarder.cancel(context.clientSession.id, context.notification.params);
    }
  }

  closeClientSession(sessionId: string): Promise<void> {
    return this.forwarder.closeClientSession(sessionId);
  }

  closeBackendSessionsOf(sessionId: string): Promise<void> {
    return this.pool.closeClientSession(sessionId);
  }

  removeBackend(name: string): Promise<void> {
    return this.forwarder.removeBackend(name);
  }

  drain(deadlineMs: number): Promise<void> {
    return this.forwarder.drain(deadlineMs);
  }

  close(): Promise<void> {
    this.statelessSessions.stop();
    return this.forwarder.close();
  }
}

/**
 * Builds the broker's ToolCallHandler (a `ToolCallHandlerFactory`). `store` replaces the
 * in-memory elicitation id store, e.g. with a shared one for several replicas;
 * `statelessSessionIdleMs` the idle time after which stateless callers' backend sessions close.
 */
export function createStreamingToolCallHandler(
  deps: ToolCallHandlerDeps,
  options: { store?: ElicitationIdStore; statelessSessionIdleMs?: number } = {},
): StreamingToolCallHandler {
  const { config, logger } = deps;
  const pool = new BackendSessionPool({ logger, requestTimeoutMs: config.requestTimeoutMs });
  const elicitations = new ElicitationIdMap({
    store: options.store,
    ttlMs: config.elicitationTtlMs,
  });
  elicitations.startSweeping(ELICITATION_SWEEP_INTERVAL_MS, error =>
    logger.warn(`Could not sweep expired elicitation ids: ${error}`),
  );
  const forwarder = new ToolCallForwarder({
    logger,
    pool,
    elicitations,
    // Answers are routed by backend name through the live server set (servers come and go at
    // runtime); a backend removed since then has no endpoint.
    endpointOf: name => {
      const server = deps.servers.get(name);
      return server ? endpointOf(server) : undefined;
    },
    toolCallTimeoutMs: config.toolCallTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
  });
  const statelessSessions = new IdleBackendSessions(pool, {
    idleMs: options.statelessSessionIdleMs ?? DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS,
    logger,
  });
  statelessSessions.start();
  return new StreamingToolCallHandler(forwarder, pool, elicitations, statelessSessions, logger);
}

/** The call's final response as a 2026-07-28 `complete` result; anything else unchanged. */
function asCompleteResponse(
  message: Record<string, unknown>,
  clientRequestId: JsonRpcId,
): Record<string, unknown> {
  if (message.id !== clientRequestId || !isPlainObject(message.result)) return message;
  return { ...message, result: completeResult(message.result) };
}

function endpointOf(server: {
  name: string;
  url: string;
  headers: Readonly<Record<string, string>>;
}): BackendEndpoint {
  return { name: server.name, url: server.url, headers: { ...server.headers } };
}
