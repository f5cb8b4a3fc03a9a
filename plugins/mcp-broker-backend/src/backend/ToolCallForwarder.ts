/*
 * Forwards a client's `tools/call` to its backend and streams the backend's answer back.
 *
 * Design: the call is POSTed to the client's own backend session (see BackendSessionPool) with
 * an id the broker chooses, and the backend's response stream is read message by message.
 * Everything on that stream belongs to this call and nothing else — that is the only correlation
 * used. Notifications (progress, logging) pass through byte for byte: the progressToken is the
 * client's own, which is safe because the backend session belongs to that client alone.
 * Server-to-client requests (elicitation, sampling) get a gateway id from ElicitationIdMap. The
 * final response goes out with the client's request id, also byte for byte apart from the id.
 *
 * Failure modes: backend errors become JSON-RPC errors (backendErrors.ts, the one mapping); a call
 * that outlives `toolCallTimeout` is cancelled at the backend and answered with a timeout error; a
 * client that disconnects or sends `notifications/cancelled` has its backend call cancelled with
 * the backend's id (also when the notification, or the session's DELETE, landed on another
 * replica: CancellationRelay, with a shared store); a backend session that vanished (404 before
 * anything streamed) is re-initialized once. Whatever happens, the call's gateway ids are
 * retired when it ends.
 *
 * A 2026-07-28 client (a call with `inputRequired`) cannot take server-to-client requests on its
 * stream: its calls are held for `input_required` rounds by HeldCalls (HeldCalls.ts), which this
 * forwarder hosts (timers, cancellation, answers to the backend).
 *
 * A backend detected as 2026-07-28 (`backendEra: 'modern'`) gets the same call statelessly: no
 * backend session, the per-request `_meta` (the end client's relayed capabilities without tasks,
 * the broker's clientInfo) and the mirroring headers (with `Mcp-Param-*` for the tool's
 * `x-mcp-header` arguments, declarations read by the catalog), the broker's credentials.
 * Everything after the POST is the same path (streaming, timeout, audit, errors); only these
 * differ:
 *   - cancellation is closing the backend stream (2026-07-28 has no `notifications/cancelled`);
 *   - `input_required`: a 2026-07-28 client gets it with the backend's `requestState` sealed in
 *     the broker's own (its retry is a new stateless call: StreamingToolCallHandler); a 2025
 *     client is asked each input on its call's stream under a gateway id, and the backend call is
 *     retried with the answers, at most {@link MAX_STATELESS_INPUT_ROUNDS} rounds (an answer
 *     given on another replica is handed over through the shared store: StatelessInputAnswers);
 *   - a task result (tasks extension) ends the call with an error naming the backend;
 *   - `prompts/get` and `resources/read` come this way too (`method`), for their
 *     `input_required`;
 *   - the result loses `resultType` (a 2026-07-28 client's sink puts `complete` back).
 */
import { randomUUID } from 'node:crypto';
import { LoggerService } from '@backstage/backend-plugin-api';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { ProtocolEra } from '../protocol/modernEra';
import { inputRequiredResult, withoutTasks } from '../protocol/modernResults';
import { paramHeaderValues, type ParamHeaderDeclaration } from '../protocol/paramHeaders';
import { modernRequestHeaders, withModernEnvelope } from './ModernBackendClient';
import { BackendSessionPool } from './BackendSessionPool';
import type { CancellationRelay } from './CancellationRelay';
import type {
  BackendEndpoint,
  BackendResponse,
  BackendSessionRef,
  BackendTarget,
} from './backendTransport';
import { MODERN_PROTOCOL_VERSION } from '../protocol/versions';
import { readBackendMessages } from './HttpBackendTransport';
import {
  BackendCallError,
  backendFailure,
  backendHttpError,
  backendMalformedResponse,
  backendReturnedTask,
  backendStreamEnded,
  backendTooManyInputRounds,
  backendTimeout,
  brokerShuttingDown,
  toClientError,
} from './backendErrors';
import type { ClientResponseOutcome } from '../types';
import { ElicitationIdMap, ElicitationMapping } from './ElicitationIdMap';
import {
  isPlainObject,
  JsonRpcErrorCode,
  type JsonRpcErrorObject,
  type JsonRpcId,
} from '../protocol/jsonRpc';
import {
  ParsedJsonRpcMessage,
  RawJsonRpcId,
  classifyJsonRpcMessage,
} from '../protocol/jsonRpcMessage';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import { DEFAULT_MAILBOX_POLL_MS, HeldCallState, HeldCalls } from './HeldCalls';
import { StatelessInputAnswers } from './StatelessInputAnswers';
import {
  OpenedRequestState,
  RequestStateBinding,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';

/**
 * Where a forwarded call writes what the client should see: the SSE response of the client's
 * POST (see `ClientEventStream`), or anything else in tests.
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

/** A client's `tools/call`, already routed to a backend. */
export interface ForwardedToolCall {
  /**
   * Whose backend sessions carry the call: the client session's id, or a stateless caller's
   * pool key (`ModernCaller.poolKey`). Cancellations and answers are matched within it.
   */
  clientSessionId: string;
  /**
   * Set when `clientSessionId` is a client session (not a stateless caller's pool key): its
   * `notifications/cancelled` and DELETE may land on another replica (CancellationRelay).
   */
  clientSession?: true;
  /** What the client declared at initialize; elicitation and sampling are relayed. */
  clientCapabilities: RelayedClientCapabilities;
  /** The backend that owns the tool. */
  endpoint: BackendEndpoint;
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
   * `input_required` (see the file comment) instead of going out on its stream.
   */
  inputRequired?: InputRequiredCaller;
  /** Called once when the backend call has ended (a held call outlives its first request). */
  onCallEnd?: () => void;
  /** The backend's detected era; `modern` makes the call stateless (see the file comment). */
  backendEra?: ProtocolEra;
}

/** What a 2026-07-28 caller's call needs for `input_required` rounds. */
export interface InputRequiredCaller {
  /** The capabilities of the request's `_meta` (only requests they cover are put to the client). */
  declaredCapabilities: Readonly<Record<string, unknown>>;
  /** What the round's `requestState` is bound to (principal, `tools/call`, name, arguments). */
  binding: RequestStateBinding;
}

/** A client's retry of a held call: `tools/call` with `inputResponses` and `requestState`. */
export interface InputRetryLeg {
  binding: RequestStateBinding;
  requestState: string;
  inputResponses: Readonly<Record<string, Record<string, unknown>>>;
  clientRequestId: JsonRpcId;
  /** The retry's own `_meta.progressToken`, if any. */
  progressToken?: string | number;
}

/** Options of {@link ToolCallForwarder}. */
export interface ToolCallForwarderOptions {
  logger: LoggerService;
  pool: BackendSessionPool;
  elicitations: ElicitationIdMap;
  /** Finds a configured backend by name (answers go to backends, possibly after a config change). */
  endpointOf: (backend: string) => BackendEndpoint | undefined;
  /** `mcpBroker.toolCallTimeout` in milliseconds. */
  toolCallTimeoutMs: number;
  /** Time limit of the broker's short requests to backends (answers, cancellations). */
  requestTimeoutMs: number;
  /**
   * The `x-mcp-header` declarations of a backend's tool (see AggregatedCatalog); a call to a
   * 2026-07-28 backend mirrors those arguments into `Mcp-Param-*` headers. None without it.
   */
  paramHeadersOf?: (backend: string, tool: string) => readonly ParamHeaderDeclaration[];
  /**
   * Seals and opens `requestState` for 2026-07-28 callers (its TTL is `elicitationTtl`, also how
   * long a call is held). Without it such callers are refused input (the backend gets an error).
   */
  requestStates?: RequestStateSealer;
  /** Shared held calls: retries may land on another replica (`sessionStore: database`). */
  heldCalls?: HeldCallStore;
  /** How often a replica serving another's held call reads the mailbox; default 100 ms. */
  mailboxPollMs?: number;
  /**
   * Cancellations and session ends of client sessions given on other replicas
   * (`sessionStore: database`); none without it.
   */
  cancellationRelay?: CancellationRelay;
}

/** JSON-RPC error code sent to a backend whose request the client did not answer in time. */
export const ELICITATION_EXPIRED_ERROR_CODE = JsonRpcErrorCode.ElicitationExpired;

/** JSON-RPC error code of an answer the broker cannot route (unknown/used/expired/foreign id). */
export const UNKNOWN_ANSWER_ERROR_CODE = JsonRpcErrorCode.InvalidRequest;

type EndReason =
  | 'timeout'
  | 'client-gone'
  | 'cancelled'
  | 'backend-removed'
  | 'shutdown'
  | 'input-expired'
  | 'missing-capability';

interface InFlightCall {
  callId: string;
  clientSessionId: string;
  /** The client's id as JSON (`"7"` and `7` differ), for matching cancellations. */
  clientRequestKey: string;
  backend: string;
  controller: AbortController;
  endReason?: EndReason;
  /** What the client is answered when the broker ends the call for a reason of the client's. */
  clientError?: JsonRpcErrorObject;
  /** Timers that retire this call's unanswered gateway ids at their expiry. */
  expiryTimers: NodeJS.Timeout[];
  /** Set before the call's first gateway id is registered: only then are there ids to retire. */
  registeredIds?: true;
  /** Set once the request is on its way to the backend (only then is there something to cancel). */
  sent?: { session: BackendSessionRef; backendRequestId: number };
  /** Set for a stateless (2026-07-28) backend call: cancelling it is closing its stream. */
  stateless?: true;
  /** `mcpBroker.toolCallTimeout`, running while a client waits (not while the call is held). */
  callTimer?: NodeJS.Timeout;
  /** Set for a 2026-07-28 caller (see HeldCalls). */
  held?: HeldCallState;
}

/**
 * Longest wait for a backend to take a cancellation before the call's stream is closed anyway
 * (the client's call must not hang on a backend that stopped answering).
 */
const MAX_CANCELLATION_WAIT_MS = 5_000;

/** Most `input_required` rounds a 2026-07-28 backend gets for a 2025 client's call (as the SDK). */
export const MAX_STATELESS_INPUT_ROUNDS = 8;

/** What the backend is told when the broker, not the client, ends a call. */
const CANCELLATION_REASONS: Record<EndReason, string> = {
  timeout: 'the broker’s tool call timeout expired',
  'client-gone': 'the client disconnected',
  cancelled: 'cancelled by the client',
  'backend-removed': 'the server was removed from the broker',
  shutdown: 'the broker is shutting down',
  'input-expired': 'the client did not send the requested input within the broker’s TTL',
  'missing-capability': 'the client cannot answer the server’s request (capability not declared)',
};

/** A 2025 client answered a 2026-07-28 backend's input request with an error. */
class ClientAnsweredError extends Error {
  constructor(readonly error: unknown) {
    super('the client answered an input request with an error');
  }
}

/** Forwards tool calls, client answers and cancellations; see the file comment. */
export class ToolCallForwarder {
  private readonly inFlight = new Map<string, InFlightCall>();
  /** `input_required` rounds of 2026-07-28 callers (when a sealer is configured). */
  private readonly heldCalls: HeldCalls | undefined;
  /** Resolved (and emptied) whenever the last call in flight ends. */
  private readonly idleWaiters: Array<() => void> = [];
  /** Answers of 2025 clients to 2026-07-28 backends' inputs, from this or another replica. */
  private readonly statelessInputs: StatelessInputAnswers;
  private nextBackendRequestId = 1;

  constructor(private readonly options: ToolCallForwarderOptions) {
    this.statelessInputs = new StatelessInputAnswers({
      logger: options.logger,
      store: options.heldCalls,
      pollMs: options.mailboxPollMs ?? DEFAULT_MAILBOX_POLL_MS,
      answerTtlMs: options.elicitations.ttlMs,
    });
    const sealer = options.requestStates;
    this.heldCalls =
      sealer &&
      new HeldCalls(
        {
          logger: options.logger,
          sealer,
          store: options.heldCalls,
          toolCallTimeoutMs: options.toolCallTimeoutMs,
          mailboxPollMs: options.mailboxPollMs,
        },
        {
          startCallTimer: entry => this.startCallTimer(entry as InFlightCall),
          stopCallTimer: entry => clearTimeout((entry as InFlightCall).callTimer),
          isInFlight: entry => this.inFlight.has(entry.callId),
          endCall: (entry, reason, clientError) => {
            const call = entry as InFlightCall;
            if (call.endReason === undefined) call.clientError = clientError;
            this.endCall(call, reason);
          },
          respond: (session, rawId, answer) => this.answerBackendRequest(session, rawId, answer),
          endpointOf: backend => this.options.endpointOf(backend),
        },
      );
  }

  /** True when 2026-07-28 callers can be asked for input (`requestStates` is configured). */
  get acceptsInputRequired(): boolean {
    return this.heldCalls !== undefined;
  }

  /** Number of calls in flight (status and tests). */
  inFlightCount(): number {
    return this.inFlight.size;
  }

  /**
   * Runs one call to completion, writing progress, server requests and the final response to
   * `sink`, then ends it. Never throws: every failure is an error response to the client (or, when
   * the client is gone or cancelled, nothing).
   */
  async forward(call: ForwardedToolCall, sink: ClientMessageSink): Promise<void> {
    const entry: InFlightCall = {
      callId: randomUUID(),
      clientSessionId: call.clientSessionId,
      clientRequestKey: JSON.stringify(call.clientRequestId),
      backend: call.endpoint.name,
      controller: new AbortController(),
      expiryTimers: [],
    };
    if (call.inputRequired === undefined || this.heldCalls === undefined) {
      await this.run(call, entry, sink);
      return;
    }
    // A 2026-07-28 caller: this request ends with the first `input_required` round or with the
    // call; the backend call itself may go on (held) and is resumed by the client's retry.
    const output = this.heldCalls.begin(entry, call.inputRequired, {
      sink,
      clientRequestId: call.clientRequestId,
      progressToken: progressTokenOf(call.params),
    });
    const legEnded = output.whenLegEnds();
    void this.run(call, entry, output);
    await legEnded;
  }

  private async run(
    call: ForwardedToolCall,
    entry: InFlightCall,
    sink: ClientMessageSink,
  ): Promise<void> {
    this.inFlight.set(entry.callId, entry);
    this.startCallTimer(entry);
    const unwatch = call.clientSession && this.watchElsewhere(entry);
    const onClientGone = () => this.endCall(entry, 'client-gone');
    sink.clientGone.addEventListener('abort', onClientGone);
    if (sink.clientGone.aborted) onClientGone();

    try {
      const final = await this.runWithSessionRetry(call, entry, sink);
      // A result that arrived while the cancellation was on its way is not the client's to see.
      if (entry.endReason !== 'cancelled') sink.send(final);
    } catch (error) {
      await this.heldCalls?.adoptRemoteClaim(entry);
      this.finishFailedCall(call, entry, sink, error);
    } finally {
      clearTimeout(entry.callTimer);
      entry.expiryTimers.forEach(clearTimeout);
      sink.clientGone.removeEventListener('abort', onClientGone);
      unwatch?.();
      this.inFlight.delete(entry.callId);
      if (this.inFlight.size === 0) this.notifyIdle();
      sink.end();
      this.heldCalls?.callEnded(entry);
      call.onCallEnd?.();
      // Before the ids go: from now on an answer on another replica learns the call ended.
      await this.statelessInputs
        .callEnded(entry.callId)
        .catch(error =>
          this.options.logger.warn(`Could not remove a call's published input requests: ${error}`),
        );
      // Most calls never ask the client anything; they cost the (possibly shared) store nothing.
      if (entry.registeredIds) {
        await this.options.elicitations
          .releaseCall(entry.callId)
          .catch(error =>
            this.options.logger.warn(`Could not retire the elicitation ids of a call: ${error}`),
          );
      }
    }
  }

  private startCallTimer(entry: InFlightCall): void {
    clearTimeout(entry.callTimer);
    entry.callTimer = setTimeout(
      () => this.endCall(entry, 'timeout'),
      this.options.toolCallTimeoutMs,
    );
  }

  private finishFailedCall(
    call: ForwardedToolCall,
    entry: InFlightCall,
    sink: ClientMessageSink,
    error: unknown,
  ): void {
    const reason = entry.endReason;
    // Cancelled calls end without a response (MCP), and a client that is gone cannot read one.
    if (reason === 'client-gone' || reason === 'cancelled' || reason === 'input-expired') return;
    if (reason === 'missing-capability' && entry.clientError !== undefined) {
      sink.send({ jsonrpc: '2.0', id: call.clientRequestId, error: entry.clientError });
      return;
    }
    if (error instanceof ClientAnsweredError) {
      sink.send({
        jsonrpc: '2.0',
        id: call.clientRequestId,
        error: {
          code: JsonRpcErrorCode.InternalError,
          message: `The client refused an input request of MCP server "${call.endpoint.name}"`,
          data: { backend: call.endpoint.name, clientError: error.error },
        },
      });
      return;
    }
    let failure: BackendCallError;
    if (reason === 'shutdown') {
      failure = brokerShuttingDown(call.endpoint.name);
    } else if (reason === 'timeout') {
      failure = backendTimeout(call.endpoint.name, this.options.toolCallTimeoutMs);
    } else if (reason === 'backend-removed') {
      failure = new BackendCallError(
        call.endpoint.name,
        'connection-lost',
        `MCP server "${call.endpoint.name}" was removed from the broker during the call`,
      );
    } else {
      failure = backendFailure(
        call.endpoint.name,
        error,
        entry.sent !== undefined || entry.stateless === true,
      );
    }
    const method = call.method ?? 'tools/call';
    this.options.logger.info(
      `${method} to MCP server "${call.endpoint.name}" failed: ${failure.message}`,
    );
    sink.send({ jsonrpc: '2.0', id: call.clientRequestId, error: toClientError(failure) });
  }

  private async runWithSessionRetry(
    call: ForwardedToolCall,
    entry: InFlightCall,
    sink: ClientMessageSink,
  ): Promise<Record<string, unknown>> {
    if (call.backendEra === 'modern') return this.runStateless(call, entry, sink);
    const signal = entry.controller.signal;
    for (let attempt = 1; ; attempt++) {
      const session = await untilAborted(
        this.options.pool.acquire(call.clientSessionId, call.endpoint, call.clientCapabilities),
        signal,
      );
      try {
        return await this.runOnce(call, entry, session, sink);
      } catch (error) {
        if (error instanceof BackendCallError && error.reason === 'session-lost') {
          // The backend restarted or expired our session before reading the call: nothing ran,
          // so one fresh session and one retry are safe.
          await this.options.pool.invalidate(call.clientSessionId, session);
          if (attempt === 1) continue;
        }
        throw error;
      }
    }
  }

  /**
   * A call to a 2026-07-28 backend (see the file comment): stateless rounds until a result that
   * is not `input_required`, or one handed to a 2026-07-28 client.
   */
  private async runStateless(
    call: ForwardedToolCall,
    entry: InFlightCall,
    sink: ClientMessageSink,
  ): Promise<Record<string, unknown>> {
    const backend = call.endpoint.name;
    entry.stateless = true;
    let params = call.params;
    for (let round = 1; ; round++) {
      const final = await this.runOnce({ ...call, params }, entry, undefined, sink);
      const result = final.result;
      if (!isPlainObject(result)) return final;
      if (isTaskResult(result)) throw backendReturnedTask(backend);
      const { resultType, ...rest } = result;
      if (resultType !== 'input_required') return { ...final, result: rest };
      const inputRequests = isPlainObject(result.inputRequests) ? result.inputRequests : undefined;
      const requestState =
        typeof result.requestState === 'string' ? result.requestState : undefined;
      if (inputRequests === undefined && requestState === undefined) {
        throw backendMalformedResponse(backend, 'an input_required result without inputs');
      }
      const sealer = this.options.requestStates;
      if (call.inputRequired !== undefined && sealer !== undefined) {
        // A 2026-07-28 client answers itself; its retry comes back with the sealed state.
        const sealed = sealer.seal(call.inputRequired.binding, {
          backend,
          ...(requestState === undefined ? {} : { backendRequestState: requestState }),
        });
        return {
          ...final,
          result: inputRequiredResult({
            inputRequests: inputRequests as Parameters<
              typeof inputRequiredResult
            >[0]['inputRequests'],
            requestState: sealed,
          }),
        };
      }
      if (call.serverRequests !== undefined) {
        // A caller that cannot be asked on its stream (a 2026-07-28 client of a broker without
        // requestState sealing): the backend's question has nowhere to go.
        return {
          jsonrpc: '2.0',
          id: call.clientRequestId,
          error: {
            code: JsonRpcErrorCode.InternalError,
            message: `MCP server "${backend}" asked for input, which the broker cannot relay to this client`,
            data: { backend },
          },
        };
      }
      if (round > MAX_STATELESS_INPUT_ROUNDS) {
        throw backendTooManyInputRounds(backend, MAX_STATELESS_INPUT_ROUNDS);
      }
      const inputResponses = await this.askStatelessInputs(
        call,
        entry,
        round,
        inputRequests ?? {},
        sink,
      );
      params = {
        ...call.params,
        inputResponses,
        ...(requestState === undefined ? {} : { requestState }),
      };
    }
  }

  /**
   * Asks a 2025 client each input of a 2026-07-28 backend's `input_required` as a real request
   * on its call's stream (gateway ids, as for a 2025 backend's requests); resolves with the
   * answers under the backend's keys, given on this replica or another (StatelessInputAnswers).
   * A client's error answer ends the call with that error.
   */
  private async askStatelessInputs(
    call: ForwardedToolCall,
    entry: InFlightCall,
    round: number,
    inputRequests: Record<string, unknown>,
    sink: ClientMessageSink,
  ): Promise<Record<string, unknown>> {
    const backend = call.endpoint.name;
    const asked = Object.entries(inputRequests).filter(
      (pair): pair is [string, Record<string, unknown>] =>
        isPlainObject(pair[1]) && typeof pair[1].method === 'string',
    );
    entry.registeredIds = true;
    const mappings = await Promise.all(
      asked.map(([key]) =>
        this.options.elicitations.register({
          backendRequestId: JSON.stringify(key),
          backend,
          backendSessionId: undefined,
          protocolVersion: MODERN_PROTOCOL_VERSION,
          clientSessionId: call.clientSessionId,
          callId: entry.callId,
        }),
      ),
    );
    const answers = await this.statelessInputs.open(entry.callId, round, mappings);
    try {
      const answered = asked.map(async ([key, request], i) => {
        const gatewayId = mappings[i].gatewayId;
        sink.send({
          jsonrpc: '2.0',
          id: gatewayId,
          method: request.method,
          ...(request.params === undefined ? {} : { params: request.params }),
        });
        const answer = await untilAborted(answers.answerTo(gatewayId), entry.controller.signal);
        if (answer.error !== undefined) throw new ClientAnsweredError(answer.error);
        return [key, answer.result ?? {}] as const;
      });
      return Object.fromEntries(await Promise.all(answered));
    } finally {
      answers.close();
    }
  }

  private async runOnce(
    call: ForwardedToolCall,
    entry: InFlightCall,
    session: BackendSessionRef | undefined,
    sink: ClientMessageSink,
  ): Promise<Record<string, unknown>> {
    const backend = call.endpoint.name;
    const backendRequestId = this.nextBackendRequestId++;
    let message = {
      jsonrpc: '2.0' as const,
      id: backendRequestId,
      method: call.method ?? 'tools/call',
      params: call.params,
    };
    let target: BackendTarget;
    if (session === undefined) {
      message = withModernEnvelope(
        message,
        withoutTasks({ ...call.clientCapabilities }),
      ) as typeof message;
      const mirrored = modernRequestHeaders(message);
      target = {
        endpoint: call.endpoint,
        ...mirrored,
        headers: { ...mirrored.headers, ...this.paramHeaders(call) },
      };
    } else {
      entry.sent = { session, backendRequestId };
      target = session;
    }
    const body = JSON.stringify(message);
    let response: BackendResponse;
    try {
      // Never replayed: the tool may have run when a connection fails (see requestBackend).
      response = await this.options.pool.transport.post(target, body, entry.controller.signal, {
        replayable: false,
      });
    } catch (error) {
      throw backendFailure(backend, error, false);
    }
    if (!response.ok) {
      // A 2026-07-28 backend answers request errors (e.g. -32021) with 4xx and a JSON-RPC body:
      // the backend's own answer, passed through like any JSON-RPC error.
      const error = session === undefined ? await jsonRpcErrorOf(response) : undefined;
      if (error !== undefined) return { jsonrpc: '2.0', id: call.clientRequestId, error };
      response.discard();
      throw backendHttpError(backend, response.status);
    }
    for await (const item of readBackendMessages(response)) {
      if (item.type === 'malformed') {
        this.options.logger.warn(
          `MCP server "${backend}" sent a message that is not JSON-RPC; dropped`,
        );
        continue;
      }
      const final = await this.relay(call, entry, session, item.parsed, backendRequestId, sink);
      if (final !== undefined) return final;
    }
    throw backendStreamEnded(backend);
  }

  /**
   * The `Mcp-Param-*` headers of a call to a 2026-07-28 backend: the tool's declarations (read
   * with its list) applied to the call's arguments.
   */
  private paramHeaders(call: ForwardedToolCall): Record<string, string> {
    // Only tools declare x-mcp-header; a prompt may share a tool's name.
    if ((call.method ?? 'tools/call') !== 'tools/call') return {};
    const tool = call.params.name;
    const declarations =
      typeof tool === 'string'
        ? this.options.paramHeadersOf?.(call.endpoint.name, tool)
        : undefined;
    return declarations === undefined || declarations.length === 0
      ? {}
      : paramHeaderValues(declarations, call.params.arguments);
  }

  /** Relays one backend message; returns the client's final response text when it is the result. */
  private async relay(
    call: ForwardedToolCall,
    entry: InFlightCall,
    session: BackendSessionRef | undefined,
    parsed: ParsedJsonRpcMessage,
    backendRequestId: number,
    sink: ClientMessageSink,
  ): Promise<Record<string, unknown> | undefined> {
    const backend = call.endpoint.name;
    // Held, and the client's retry went to another replica? Then this goes to its mailbox.
    if (entry.held !== undefined && !entry.held.output.attached) {
      await this.heldCalls?.adoptRemoteClaim(entry);
    }
    switch (classifyJsonRpcMessage(parsed)) {
      case 'notification':
        sink.send(parsed.message);
        return undefined;
      case 'request': {
        if (session === undefined) {
          // 2026-07-28 has no server-to-client requests (input comes as input_required).
          this.options.logger.warn(
            `MCP server "${backend}" sent a request on a 2026-07-28 call's stream; dropped`,
          );
          return undefined;
        }
        if (entry.held !== undefined && this.heldCalls !== undefined) {
          await this.heldCalls.ask(entry, session, parsed);
          return undefined;
        }
        if (call.serverRequests !== undefined) {
          const rawId = parsed.rawId!;
          const { method, params } = parsed.message as {
            method: string;
            params?: Record<string, unknown>;
          };
          await call.serverRequests(
            {
              method,
              params,
              rawId,
              respond: answer => this.respondToBackend(session, rawId, answer),
            },
            sink,
          );
          return undefined;
        }
        entry.registeredIds = true;
        const mapping = await this.options.elicitations.register({
          backendRequestId: parsed.rawId!,
          backend,
          backendSessionId: session.sessionId,
          protocolVersion: session.protocolVersion,
          clientSessionId: call.clientSessionId,
          callId: entry.callId,
        });
        sink.send({ jsonrpc: '2.0', id: mapping.gatewayId, ...withoutId(parsed.message) });
        const expiry = setTimeout(
          () => void this.expireUnanswered(mapping.gatewayId),
          Math.max(0, mapping.expiresAt - Date.now()),
        );
        expiry.unref();
        entry.expiryTimers.push(expiry);
        return undefined;
      }
      case 'response':
        if (parsed.message.id === backendRequestId) {
          const { result, error } = parsed.message;
          return error !== undefined
            ? { jsonrpc: '2.0', id: call.clientRequestId, error }
            : { jsonrpc: '2.0', id: call.clientRequestId, result };
        }
        this.options.logger.warn(
          `MCP server "${backend}" sent a response to a request the broker did not make; dropped`,
        );
        return undefined;
      default:
        this.options.logger.warn(
          `MCP server "${backend}" sent an invalid JSON-RPC message; dropped`,
        );
        return undefined;
    }
  }

  /**
   * Resumes a held call with a 2026-07-28 client's retry (see HeldCalls.resume): throws
   * {@link RequestStateRefusal} before anything reaches a backend when the state is refused.
   * Resolves with the opened state when it is a 2026-07-28 backend's round (nothing written):
   * the caller then forwards the retry to that backend as a new call.
   */
  resume(retry: InputRetryLeg, sink: ClientMessageSink): Promise<OpenedRequestState | undefined> {
    if (this.heldCalls === undefined) return Promise.reject(new RequestStateRefusal('malformed'));
    return this.heldCalls.resume(retry, sink);
  }

  /** Answers a backend's request with its own id; a failure is logged (the call goes on). */
  private async answerBackendRequest(
    session: BackendSessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void> {
    await this.respondToBackend(session, rawId, answer).catch(error =>
      this.options.logger.info(
        `Could not answer a request of MCP server "${session.endpoint.name}": ${error}`,
      ),
    );
  }

  /**
   * Routes a client's JSON-RPC response (to an elicitation or sampling request) to the backend
   * that asked, with the backend's original id. Unknown, used, expired or foreign ids reach nobody.
   */
  async answer(clientSessionId: string, answer: ClientAnswer): Promise<ClientResponseOutcome> {
    const mapping = await this.options.elicitations.claim(answer.id, clientSessionId);
    if (!mapping) {
      return unknownId(
        'This response answers no pending request of this session: its id is unknown, expired or already answered',
      );
    }
    if (mapping.backendSessionId === undefined) {
      // An input of a 2026-07-28 backend: the call waiting for it (here or on another replica)
      // takes the answer.
      let delivery;
      try {
        delivery = await this.statelessInputs.deliver(mapping, answer);
      } catch (error) {
        // Not handed over: the id is answerable again (the client is told to retry).
        await this.options.elicitations.restore(mapping).catch(() => undefined);
        throw error;
      }
      return delivery === 'delivered'
        ? { outcome: 'delivered' }
        : unknownId('This response answers a request whose tool call has already ended');
    }
    const configured = this.options.endpointOf(mapping.backend);
    if (!configured) {
      return unknownId(`MCP server "${mapping.backend}" is no longer configured in the broker`);
    }
    // The asking session's own credential (a person's, spec §11) when it is held here.
    const endpoint =
      this.options.pool.endpointOf(mapping.clientSessionId, mapping.backend) ?? configured;
    const body = responseWithRawId(mapping.backendRequestId, answer);
    try {
      const response = await this.answerBackend(mapping, endpoint, body);
      if (!response.ok) throw backendHttpError(mapping.backend, response.status);
    } catch (error) {
      const failure = backendFailure(mapping.backend, error, false);
      this.options.logger.info(
        `Could not deliver an answer to MCP server "${mapping.backend}": ${failure.message}`,
      );
      return { outcome: 'backend-failed', error: toClientError(failure) };
    }
    return { outcome: 'delivered' };
  }

  /** Posts a JSON-RPC response with the backend's own id to the call's backend session. */
  private async respondToBackend(
    session: BackendSessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void> {
    const body = responseWithRawId(rawId, { id: rawId, ...answer });
    const response = await this.options.pool.transport.post(
      session,
      body,
      AbortSignal.timeout(this.options.requestTimeoutMs),
    );
    response.discard();
    if (!response.ok) throw backendHttpError(session.endpoint.name, response.status);
  }

  /**
   * An id expired unanswered while its call still runs: tell the backend that no answer will come
   * (a JSON-RPC error with its own id), so the tool can go on instead of waiting for the call
   * timeout. A late answer from the client is refused with 404 as for any expired id.
   */
  private async expireUnanswered(gatewayId: string): Promise<void> {
    const mapping = await this.options.elicitations.expire(gatewayId);
    if (!mapping) return; // answered (or the call ended) in time
    const endpoint = this.options.endpointOf(mapping.backend);
    if (!endpoint) return;
    const body = responseWithRawId(mapping.backendRequestId, {
      id: mapping.backendRequestId,
      error: {
        code: ELICITATION_EXPIRED_ERROR_CODE,
        message: `The client did not answer within the broker's elicitation TTL of ${this.options.elicitations.ttlMs} ms (mcpBroker.elicitationTtl)`,
      },
    });
    try {
      await this.answerBackend(mapping, endpoint, body);
    } catch (error) {
      this.options.logger.debug(
        `Could not tell MCP server "${mapping.backend}" that an elicitation expired: ${error}`,
      );
    }
  }

  /**
   * POSTs a JSON-RPC response (`body`, the backend's id already restored) to the backend session
   * that asked; the body of the backend's answer is discarded.
   */
  private async answerBackend(
    mapping: ElicitationMapping,
    endpoint: BackendEndpoint,
    body: string,
  ): Promise<BackendResponse> {
    const target = {
      endpoint,
      sessionId: mapping.backendSessionId,
      protocolVersion: mapping.protocolVersion,
    };
    const response = await this.options.pool.transport.post(
      target,
      body,
      AbortSignal.timeout(this.options.requestTimeoutMs),
    );
    response.discard();
    return response;
  }

  /**
   * Handles the client's `notifications/cancelled`: the matching call of this session is
   * cancelled at its backend with the backend's request id, and its stream ends without a result
   * (as MCP prescribes for cancelled requests). Returns false when no such call is in flight.
   */
  cancel(
    clientSessionId: string,
    params: { requestId?: unknown; reason?: unknown } | undefined,
  ): boolean {
    if (
      params === undefined ||
      (typeof params.requestId !== 'string' && typeof params.requestId !== 'number')
    ) {
      return false;
    }
    const key = JSON.stringify(params.requestId);
    for (const entry of this.inFlight.values()) {
      if (entry.clientSessionId === clientSessionId && entry.clientRequestKey === key) {
        const reason = typeof params.reason === 'string' ? params.reason : undefined;
        this.endCall(entry, 'cancelled', reason);
        return true;
      }
    }
    return false;
  }

  /**
   * Lets the call be cancelled, or its session ended, from another replica (with a shared
   * store): as a local `notifications/cancelled` and a local DELETE end it. Returns the unwatch.
   */
  private watchElsewhere(entry: InFlightCall): (() => void) | undefined {
    return this.options.cancellationRelay?.watch({
      sessionId: entry.clientSessionId,
      requestKey: entry.clientRequestKey,
      cancel: reason => this.endCall(entry, 'cancelled', reason),
      sessionEnded: () => this.endCall(entry, 'client-gone'),
    });
  }

  /** Ends everything a client session had: its calls (cancelled at the backends), ids and sessions. */
  async closeClientSession(clientSessionId: string): Promise<void> {
    for (const entry of this.inFlight.values()) {
      if (entry.clientSessionId === clientSessionId) this.endCall(entry, 'client-gone');
    }
    await Promise.all([
      this.options.elicitations.releaseClientSession(clientSessionId),
      this.options.pool.closeClientSession(clientSessionId),
    ]);
  }

  /** Ends every call to a backend that was removed and closes the sessions with it. */
  async removeBackend(backend: string): Promise<void> {
    for (const entry of this.inFlight.values()) {
      if (entry.backend === backend) {
        entry.endReason ??= 'backend-removed';
        entry.controller.abort();
      }
    }
    await this.options.pool.closeBackend(backend);
  }

  /**
   * Shutdown, first half: lets the calls in flight finish for up to `deadlineMs`, then ends each
   * remaining one with a "shutting down, retry" error to its client (and a cancellation to its
   * backend). Resolves once no call is in flight.
   */
  async drain(deadlineMs: number): Promise<void> {
    // A held call waits for a client that may come back only after the shutdown: end it now.
    for (const entry of this.inFlight.values()) {
      if (this.heldCalls?.isHolding(entry)) this.endCall(entry, 'shutdown');
    }
    if (this.inFlight.size > 0) {
      await new Promise<void>(resolve => {
        const timer = setTimeout(resolve, deadlineMs);
        this.idleWaiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    if (this.inFlight.size === 0) return;
    for (const entry of this.inFlight.values()) this.endCall(entry, 'shutdown');
    await new Promise<void>(resolve => this.idleWaiters.push(resolve));
  }

  /** Shutdown, second half: ends every call still running (unanswered), every backend session. */
  async close(): Promise<void> {
    for (const entry of this.inFlight.values()) {
      entry.endReason ??= 'shutdown';
      entry.controller.abort();
    }
    this.notifyIdle();
    this.options.elicitations.stop();
    await this.options.pool.closeAll();
  }

  private notifyIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }

  /**
   * Ends a call once, for `reason`. A call already sent to its backend is cancelled there first
   * (`notifications/cancelled` with the backend's id) and its backend stream closed only after
   * the backend took the notification (or could not within the wait below): a backend that
   * treats a closed stream as the end of the call can still match the notification to it.
   */
  private endCall(entry: InFlightCall, reason: EndReason, clientReason?: string): void {
    if (entry.endReason !== undefined) return;
    entry.endReason = reason;
    if (entry.sent === undefined || entry.stateless) {
      entry.controller.abort();
      return;
    }
    void this.cancelAtBackend(entry, clientReason ?? CANCELLATION_REASONS[reason]).finally(() =>
      entry.controller.abort(),
    );
  }

  /** Sends the backend `notifications/cancelled`; resolves once it was taken or failed. */
  private async cancelAtBackend(entry: InFlightCall, reason: string): Promise<void> {
    if (!entry.sent) return;
    const { session, backendRequestId } = entry.sent;
    const body = JSON.stringify({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: backendRequestId, reason },
    });
    const waitMs = Math.min(this.options.requestTimeoutMs, MAX_CANCELLATION_WAIT_MS);
    try {
      const response = await this.options.pool.transport.post(
        session,
        body,
        AbortSignal.timeout(waitMs),
      );
      response.discard();
    } catch (error) {
      const backend = entry.backend;
      this.options.logger.debug(`Could not cancel a call at MCP server "${backend}": ${error}`);
    }
  }
}

/** The `_meta.progressToken` of request params, if any. */
export function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}

/** The JSON-RPC error of a backend's 4xx body, if it is one (else undefined; body consumed). */
async function jsonRpcErrorOf(response: BackendResponse): Promise<JsonRpcErrorObject | undefined> {
  if (response.status < 400 || response.status >= 500) return undefined;
  try {
    const body: unknown = JSON.parse(await response.text(64 * 1024));
    const error = isPlainObject(body) ? body.error : undefined;
    return isPlainObject(error) &&
      typeof error.code === 'number' &&
      typeof error.message === 'string'
      ? (error as unknown as JsonRpcErrorObject)
      : undefined;
  } catch {
    return undefined;
  }
}

/** True for a result of the tasks extension (a task instead of the tool's result). */
function isTaskResult(result: Record<string, unknown>): boolean {
  return result.resultType === 'task' || isPlainObject(result.task);
}

function unknownId(message: string): ClientResponseOutcome {
  return { outcome: 'unknown-id', error: { code: UNKNOWN_ANSWER_ERROR_CODE, message } };
}

function withoutId(message: Record<string, unknown>): Record<string, unknown> {
  const { id: _backendId, ...rest } = message;
  return rest;
}

/** Waits for `promise`, but stops waiting (rejecting) as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      value => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      error => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Serialises the answer for the backend with the backend's id spliced in as its original JSON
 * token, so that `7.5` stays a float, `7` an integer and `"7"` a string.
 */
function responseWithRawId(rawId: RawJsonRpcId, answer: ClientAnswer): string {
  const member =
    answer.error !== undefined
      ? `"error":${JSON.stringify(answer.error)}`
      : `"result":${JSON.stringify(answer.result ?? {})}`;
  return `{"jsonrpc":"2.0","id":${rawId},${member}}`;
}
