/*
 * The seam between the broker's client-facing dispatcher (sessions, lists, events) and the
 * tool-call machinery (progress, elicitation, cancellation). The dispatcher authenticates the
 * client, finds its session, resolves the prefixed tool name, and then hands every
 * tool-call-related message to one ToolCallHandler. Everything behind that interface may be
 * replaced without touching the router.
 */
import type { BrokerServerConfig } from './config';
import type { RequestStateSealer } from './inputRequests/RequestStateSealer';
import type {
  JsonRpcErrorObject,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from './protocol/jsonRpc';
import type { ClientRequestTelemetry } from './telemetry/BrokerTelemetry';

/**
 * A backend MCP server as configured: its name, endpoint, tool prefix and the broker's own
 * credentials for it (`headers`, secret: never log them).
 */
export type BrokerBackend = BrokerServerConfig;

/** What the broker knows about a client session. */
export interface ClientSessionInfo {
  /** The `Mcp-Session-Id` (≥ 128 random bits, base64url). */
  readonly id: string;
  /**
   * The authenticated principal that owns the session: `user:<entity ref>` or
   * `service:<subject>`. Requests with another principal's token never see this session.
   */
  readonly principal: string;
  /** The protocol version negotiated with the client. */
  readonly protocolVersion: string;
  /** The capabilities the client declared in `initialize` (e.g. `elicitation`, `sampling`). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** The client's `clientInfo` from `initialize`, if any. */
  readonly clientInfo?: Readonly<Record<string, unknown>>;
  /**
   * The curated endpoint the session was made on (spec §13); absent for the main endpoint. A
   * session is used only on the path that made it.
   */
  readonly endpoint?: string;
}

/**
 * One SSE stream towards a client, with keep-alive comments and a bounded write buffer: a
 * client that does not read is disconnected (the stream closes) instead of queueing without
 * limit. Closed on shutdown by the broker.
 */
export interface ClientEventStream {
  /** Sends one JSON-RPC message as an SSE `message` event; false when the stream is closed. */
  send(message: JsonRpcMessage): boolean;
  /** Ends the stream (idempotent). */
  close(): void;
  /** True once the stream is closed, by either side. */
  readonly closed: boolean;
  /** Aborted when the stream closes. */
  readonly signal: AbortSignal;
}

/** What the broker sets on every client stream it owns. */
export interface ClientEventStreamSettings {
  /** Interval of keep-alive comments. */
  keepAliveMs: number;
  /** Bytes waiting for a client that does not read before it is disconnected. */
  maxBufferedBytes: number;
  /** Called once when the stream closes, for whatever reason. */
  onClose?: (reason: 'ended' | 'client-gone' | 'too-slow') => void;
}

/** Opens one client stream with the broker's settings (the transport's side: SSE over HTTP). */
export type ClientEventStreamOpener = (settings: ClientEventStreamSettings) => ClientEventStream;

/**
 * The answer to one client request as a tool-call handler writes it (the router's
 * ResponseWriter: SSE over the HTTP response, or one JSON document): messages, then the final
 * response. Whether the answer is a stream or plain JSON, and when its headers leave, is the
 * writer's decision. Nothing of HTTP but the status of a plain JSON answer.
 */
export interface ClientResponseWriter {
  /**
   * Sends one message that is not the final response (progress, a request for input, a log
   * line): the answer becomes a stream. False once the answer ended or the client left.
   */
  send(message: JsonRpcMessage): boolean;
  /**
   * Sends the final response and ends the answer: the stream's last event, or, when nothing was
   * sent before and the request allows it, plain JSON with `httpStatus` (default 200; a
   * 2026-07-28 request the broker refuses, e.g. a bad `requestState`, gets 400).
   */
  finish(message: JsonRpcMessage, httpStatus?: number): boolean;
  /** Ends the answer without a final response (a cancelled call). */
  end(): void;
  /** True once an answer has begun (headers sent) or the client's connection is gone. */
  readonly answered: boolean;
}

/**
 * Sends one backend request of a call that may create a task (`declareTasks`: the request
 * declares the tasks extension) and resolves with its response as the client is to see it
 * (`requestId`: the client's id, for an answer the creation gives without the backend;
 * `call`: the call it runs in, for a creation that waits for the task itself).
 */
export type TaskCreation = (
  send: (declareTasks: boolean) => Promise<Record<string, unknown>>,
  requestId: JsonRpcId,
  call?: TaskCreationCall,
) => Promise<Record<string, unknown>>;

/** The call a {@link TaskCreation} runs in (see there). */
export interface TaskCreationCall {
  /** Aborts when the call ends (`toolCallTimeout`, the client going away, shutdown). */
  readonly signal: AbortSignal;
  /** What the call's client declared that the broker relays (which inputs it can be asked). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /**
   * Asks the call's client the inputs of a 2026-07-28 backend (on the call's stream, under
   * gateway ids) and resolves with their answers by the backend's keys; `{ final }` when the
   * client cannot be asked (the call's response then).
   */
  askInputs(
    inputRequests: Record<string, unknown>,
    round: number,
  ): Promise<
    | { readonly inputResponses: Record<string, unknown> }
    | { readonly final: Record<string, unknown> }
  >;
}

/** Arguments of {@link ToolCallHandler.handleToolCall}. */
export interface ToolCallContext {
  readonly clientSession: ClientSessionInfo;
  /** The backend that owns the tool. */
  readonly backend: BrokerBackend;
  /**
   * The client's `tools/call` request (or `prompts/get` / `resources/read` to a 2026-07-28
   * backend), unchanged except `params.name`, which is already the backend's own (unprefixed)
   * tool or prompt name. `id` and `params._meta.progressToken` are the client's.
   */
  readonly request: JsonRpcRequest;
  /** The client's answer. The handler finishes it exactly once (or ends it, cancelled). */
  readonly response: ClientResponseWriter;
  /** Aborted when the client's POST connection closes, its session ends, or the broker stops. */
  readonly signal: AbortSignal;
  /**
   * The client request's telemetry: each request the call sends to its backend is measured
   * and traced as a child of it (its trace context goes to the backend). Absent: not measured.
   */
  readonly telemetry?: ClientRequestTelemetry;
  /**
   * The headers of this person's requests to the backend (spec §11: their credential in place
   * of the broker's own); absent: the server's static headers (`broker` mode).
   */
  readonly personalHeaders?: Readonly<Record<string, string>>;
  /**
   * A 2026-07-28 `tools/call` of a client that declared the tasks extension, to a 2026-07-28
   * backend that did too: how a task answer is recorded and shown (ForwardedToolCall).
   */
  readonly taskCreation?: TaskCreation;
}

/**
 * Who makes a 2026-07-28 (stateless) tool call. Such a client has no session: everything the
 * broker knows about it comes with the request (`_meta`) and its token.
 */
export interface ModernCaller {
  readonly era: 'modern';
  /** The authenticated principal (`user:<entity ref>` or `service:<subject>`). */
  readonly principal: string;
  /** The request's `io.modelcontextprotocol/protocolVersion`. */
  readonly protocolVersion: string;
  /** The request's `io.modelcontextprotocol/clientCapabilities` (never inferred). */
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  /** The request's `io.modelcontextprotocol/clientInfo`, if any (self-reported). */
  readonly clientInfo?: Readonly<Record<string, unknown>>;
  /**
   * The request's `io.modelcontextprotocol/logLevel`: without it the client gets no log
   * messages (`notifications/message`), with it those of that severity and above.
   */
  readonly logLevel?: string;
  /**
   * Digest of (principal, relayed capabilities): modern calls with equal keys may share the
   * backend sessions the broker holds for them (a backend session declares the capabilities of
   * whoever it asks for input, so callers with other capabilities never share one).
   */
  readonly poolKey: string;
  /** The curated endpoint the request came through (spec §13); absent on /mcp. */
  readonly endpoint?: string;
}

/**
 * Arguments of {@link ToolCallHandler.handleModernToolCall}: a {@link ToolCallContext} with the
 * stateless caller in place of the client session. The final response is a 2026-07-28
 * `complete` result; `signal` aborts when the client closes the response stream (its way of
 * cancelling) or the broker stops.
 */
export interface ModernToolCallContext extends Omit<ToolCallContext, 'clientSession'> {
  readonly caller: ModernCaller;
  /**
   * Shapes the final result for the client (default: a `complete` result); `resources/read`
   * adds its cache hints.
   */
  readonly shapeResult?: (result: Record<string, unknown>) => Record<string, unknown>;
}

/** Arguments of {@link ToolCallHandler.handleClientResponse}. */
export interface ClientResponseContext {
  readonly clientSession: ClientSessionInfo;
  /**
   * A JSON-RPC response the client POSTed (its answer to a server→client request such as
   * `elicitation/create`); its id is whatever the broker gave the client (e.g. `<server>:<random>`).
   */
  readonly message: JsonRpcResponse;
  /**
   * The headers of this client's credential for a server that acts with each person's identity
   * (spec §11), obtained for the answering request: used when the backend session that asked is
   * held by another replica. Resolves undefined for a `broker`-mode server; rejects with a
   * PersonalCredentialError when no credential can be had.
   */
  readonly personalHeaders?: (
    backend: string,
  ) => Promise<Readonly<Record<string, string>> | undefined>;
}

/**
 * What became of a client's JSON-RPC response (see {@link ToolCallHandler.handleClientResponse}):
 * - `delivered`: it reached the backend that asked;
 * - `unknown-id`: its id is no pending request of this session (unknown, used, expired, foreign,
 *   or its backend is gone); nothing reached a backend;
 * - `backend-failed`: the backend could not take it;
 * - `credential-failed`: the person's credential for the backend could not be had, so the answer
 *   was not sent (never with the broker's own credentials instead).
 * `error` (for all but `delivered`) is the JSON-RPC error the client is told. The router turns
 * the outcome into the HTTP answer (202, 404, 502, 403).
 */
export interface ClientResponseOutcome {
  readonly outcome: 'delivered' | 'unknown-id' | 'backend-failed' | 'credential-failed';
  readonly error?: JsonRpcErrorObject;
}

/** Arguments of {@link ToolCallHandler.handleClientNotification}. */
export interface ClientNotificationContext {
  readonly clientSession: ClientSessionInfo;
  /** Currently only `notifications/cancelled`; the router answers the client 202 itself. */
  readonly notification: JsonRpcNotification;
}

/**
 * The tool-call half of the broker. The router calls it for:
 * - `tools/call` requests of both eras (`handleToolCall` for sessions, `handleModernToolCall`
 *   for stateless 2026-07-28 clients), after authenticating the client, checking its session
 *   (or request metadata) and resolving the prefixed tool name to a backend (unknown names
 *   never reach the handler: the router answers `-32602`);
 * - `prompts/get` and `resources/read` to a 2026-07-28 backend (same entries, `request.method`
 *   tells them apart): such a backend may answer them with `input_required` too, which needs
 *   the tool calls' rounds;
 * - JSON-RPC responses POSTed by a client (answers to elicitation or sampling requests);
 * - `notifications/cancelled` from a client;
 * - the end of a client session (DELETE, idle expiry, shutdown) and the removal of a backend.
 *
 * Contract: `handleToolCall` answers `response` itself, exactly once;
 * `handleClientResponse` resolves with the outcome and the router answers. Neither throws for
 * client mistakes (unexpected errors are mapped to a JSON-RPC error by the
 * router only if nothing was written yet). The handler never forwards the client's credentials
 * to a backend: it uses `backend.headers`. `close` releases every timer and connection.
 */
export interface ToolCallHandler {
  handleToolCall(context: ToolCallContext): Promise<void>;
  /**
   * A 2026-07-28 client's `tools/call` (routed and permitted as for sessions). Its backend
   * sessions are held per `caller.poolKey` and closed after an idle time, on backend removal
   * and on shutdown (no DELETE ever comes from a stateless client).
   */
  handleModernToolCall(context: ModernToolCallContext): Promise<void>;
  handleClientResponse(context: ClientResponseContext): Promise<ClientResponseOutcome>;
  handleClientNotification(context: ClientNotificationContext): Promise<void>;
  /** The client session ended: end its backend sessions and drop its pending elicitations. */
  closeClientSession(sessionId: string): Promise<void>;
  /**
   * The client session was ended on this replica (DELETE): tell the other replicas, whose calls
   * of it end too. Optional: without it they end at their next session sweep.
   */
  announceSessionEnd?(sessionId: string): Promise<void>;
  /**
   * This replica no longer serves the client session, which goes on elsewhere (it was idle and
   * made room under mcpBroker.sessionLimits.perReplica): close the backend sessions held for it
   * here, and nothing else. Optional: without it they close with the session.
   */
  closeBackendSessionsOf?(sessionId: string): Promise<void>;
  /** The backend was removed from the configuration: drop everything that belongs to it. */
  removeBackend(name: string): Promise<void>;
  /**
   * Shutdown begins: let the calls in flight finish for up to `deadlineMs`, then answer each
   * remaining one with a "shutting down, may be retried" JSON-RPC error. Resolves when no call
   * is in flight. Optional: a handler without it has its calls ended by `close`.
   */
  drain?(deadlineMs: number): Promise<void>;
  /**
   * Opens the asking of `context.backend`'s requests on a 2025-11-25 client's `tasks/result`
   * stream (contract tasks-and-apps §2.12.1): each goes to the client under a gateway id, as a
   * call's do, and the client's answer — on any replica, once — reaches the backend session that
   * asked. Optional: without it such requests are refused towards the backend.
   */
  askOnTaskStream?(context: TaskStreamContext): TaskStreamAsker;
  /**
   * What seals and opens the `requestState` of 2026-07-28 callers (spec §9); absent: no
   * `input_required` rounds.
   */
  readonly requestStates?: RequestStateSealer;
  /** The broker is shutting down. */
  close(): Promise<void>;
}

/** The client stream a task's backend requests are asked on (a legacy `tasks/result`). */
export interface TaskStreamContext {
  /** The client session whose `tasks/result` it is: only it may answer. */
  readonly clientSessionId: string;
  /** The configured name of the task's server. */
  readonly backend: string;
  /** The answer to the client's `tasks/result`. */
  readonly response: ClientResponseWriter;
  /** Aborted when the client's POST connection closes or the broker stops. */
  readonly signal: AbortSignal;
}

/** A backend session's server-to-client request, to put to a client. */
export interface BackendSessionRequest {
  /** The `Mcp-Session-Id` of the backend session that asked (where the answer goes). */
  readonly sessionId: string | undefined;
  /** That session's protocol version. */
  readonly protocolVersion: string;
  /** The backend's request id, as its exact JSON token. */
  readonly rawId: string;
  /** The request as the client is to see it (its `id` is replaced by a gateway id). */
  readonly message: Record<string, unknown>;
}

/** Asks one client stream a task's backend requests; see `ToolCallHandler.askOnTaskStream`. */
export interface TaskStreamAsker {
  /** Sends `request` to the client under a fresh gateway id (resolves once it is recorded). */
  ask(request: BackendSessionRequest): Promise<void>;
  /** The stream ended: its gateway ids unanswered so far are retired. */
  end(): Promise<void>;
}
