/*
 * The broker's ToolCallHandler: adapts the router's seam (src/types.ts) to the
 * ToolCallForwarder, the BackendSessionPool and the ElicitationIdMap. A client's response ends in
 * a domain outcome (delivered, unknown id, backend failed); the router decides the HTTP answer.
 */
import type {
  ClientNotificationContext,
  ClientResponseContext,
  ClientResponseOutcome,
  ToolCallContext,
  ToolCallHandler,
  ToolCallHandlerDeps,
} from '../types';
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import { relayedCapabilities } from '../protocol/capabilities';
import { BackendSessionPool } from './BackendSessionPool';
import { ElicitationIdMap, ElicitationIdStore } from './ElicitationIdMap';
import { ToolCallForwarder } from './ToolCallForwarder';
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
  ) {}

  async handleToolCall(context: ToolCallContext): Promise<void> {
    const { clientSession, backend, request } = context;
    const stream = context.openEventStream();
    await this.forwarder.forward(
      {
        clientSessionId: clientSession.id,
        clientCapabilities: relayedCapabilities(clientSession.clientCapabilities),
        endpoint: endpointOf(backend),
        clientRequestId: request.id,
        params: request.params ?? {},
      },
      {
        send: message => stream.send(message as unknown as JsonRpcMessage),
        end: () => stream.close(),
        clientGone: context.signal,
      },
    );
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
    return this.forwarder.close();
  }
}

/**
 * Builds the broker's ToolCallHandler (a `ToolCallHandlerFactory`). `store` replaces the
 * in-memory elicitation id store, e.g. with a shared one for several replicas.
 */
export function createStreamingToolCallHandler(
  deps: ToolCallHandlerDeps,
  options: { store?: ElicitationIdStore } = {},
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
  return new StreamingToolCallHandler(forwarder, pool, elicitations);
}

function endpointOf(server: {
  name: string;
  url: string;
  headers: Readonly<Record<string, string>>;
}): BackendEndpoint {
  return { name: server.name, url: server.url, headers: { ...server.headers } };
}
