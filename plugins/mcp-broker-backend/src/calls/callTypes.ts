/*
 * The types the call machinery's files share (calls/): what a call is asked to do
 * (ForwardedToolCall), where it writes (ClientMessageSink), what a client answers (ClientAnswer)
 * and how a backend's requests reach whoever handles them. Types only, so that every file of
 * the folder may import them and none imports another just for a type (no file circles).
 */
import type { BackendChannels } from '../backend/backendChannels';
import type { BackendEndpoint } from '../backend/backendTransport';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { JsonRpcId } from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';
import type { ProtocolEra } from '../protocol/modernEra';
import type { RequestStateBinding } from '../inputRequests/RequestStateSealer';
import type { ClientRequestTelemetry } from '../telemetry/BrokerTelemetry';

/**
 * Where a call writes what the client should see: the response of the client's POST (see
 * `ClientEventStream`), a held call's current client request, another replica's mailbox, or a
 * test's recorder.
 */
export interface ClientMessageSink {
  /** Sends one JSON-RPC message to the client; false when the stream is gone. */
  send(message: Record<string, unknown>): boolean;
  /** Ends the stream (after the final response). */
  end(): void;
  /** Aborts when the client went away (its POST stream closed, or its session ended). */
  readonly clientGone: AbortSignal;
}

/** A client's JSON-RPC response to a request the broker forwarded (elicitation, sampling). */
export interface ClientAnswer {
  id: unknown;
  result?: unknown;
  error?: unknown;
}

/**
 * A backend's server-to-client request (elicitation, sampling, roots) during a call, handed to
 * {@link ForwardedToolCall.serverRequests}. `respond` posts a JSON-RPC response with the
 * backend's original id (same JSON type and value) to the backend session of the call.
 */
export interface BackendServerRequest {
  readonly method: string;
  readonly params: Record<string, unknown> | undefined;
  /** The backend's id as its raw JSON token (`42`, `"42"` and `7.5` stay what they are). */
  readonly rawId: RawJsonRpcId;
  respond(answer: { result?: unknown; error?: unknown }): Promise<void>;
}

/**
 * What to do with a backend's server-to-client request during a call. Absent: the request goes
 * to the client on the call's stream under a gateway id (the session era, spec §4).
 */
export type BackendServerRequestHandler = (
  request: BackendServerRequest,
  sink: ClientMessageSink,
) => Promise<void>;

/** What a 2026-07-28 caller's call needs for `input_required` rounds. */
export interface InputRequiredCaller {
  /** The capabilities of the request's `_meta` (only requests they cover are put to the client). */
  declaredCapabilities: Readonly<Record<string, unknown>>;
  /** What the round's `requestState` is bound to (principal, `tools/call`, name, arguments). */
  binding: RequestStateBinding;
}

/** A client's `tools/call`, already routed to a backend. */
export interface ForwardedToolCall {
  /**
   * Whose backend sessions carry the call: the client session's id, or a stateless caller's
   * pool key (`ModernCaller.poolKey`). Cancellations and answers are matched within it.
   */
  clientSessionId: string;
  /**
   * Set when `clientSessionId` is a client session (not a stateless caller's pool key): its
   * `notifications/cancelled` and DELETE may land on another replica.
   */
  clientSession?: true;
  /** What the client declared at initialize; elicitation and sampling are relayed. */
  clientCapabilities: RelayedClientCapabilities;
  /** The backend that owns the tool (its channels). */
  backend: BackendChannels;
  /**
   * Where this person's requests go, with their credential (spec §11); the channel sends the
   * call's requests — and its backend session's, for a 2025 backend — with it. Absent: the
   * backend's own endpoint (the server's static headers).
   */
  personalEndpoint?: BackendEndpoint;
  /** The client's request id. */
  clientRequestId: JsonRpcId;
  /** The call's params with `name` already the backend's own tool name; `_meta` passes through. */
  params: Record<string, unknown>;
  /**
   * The request's method: `tools/call` (default), or `prompts/get` / `resources/read` to a
   * 2026-07-28 backend (which may answer them with `input_required` too).
   */
  method?: string;
  /** Handles the backend's server-to-client requests instead of the gateway-id relay. */
  serverRequests?: BackendServerRequestHandler;
  /**
   * Set for a 2026-07-28 client: the backend's requests for input end the client's request with
   * `input_required` instead of going out on its stream.
   */
  inputRequired?: InputRequiredCaller;
  /** Called once when the backend call has ended (a held call outlives its first request). */
  onCallEnd?: () => void;
  /** The backend's detected era; `modern` makes the call stateless. */
  backendEra?: ProtocolEra;
  /**
   * The client request's telemetry: each request the call sends to its backend is measured and
   * traced as its child (the trace context goes with it). Absent: not measured.
   */
  telemetry?: ClientRequestTelemetry;
}

/** A client's retry of a held call: `tools/call` with `inputResponses` and `requestState`. */
export interface InputRetry {
  binding: RequestStateBinding;
  requestState: string;
  inputResponses: Readonly<Record<string, Record<string, unknown>>>;
  clientRequestId: JsonRpcId;
  /** The retry's own `_meta.progressToken`, if any. */
  progressToken?: string | number;
}

/**
 * How answers reach backends and backends are found again: what the held calls need of the
 * answer router (AnswerRouter implements it).
 */
export interface BackendResponder {
  /** Answers a backend's request with its own id; a failure is logged, never thrown. */
  respond(
    session: LegacySessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void>;
  /** The live backend by name (undefined once it was removed). */
  backendOf(name: string): BackendChannels | undefined;
}
