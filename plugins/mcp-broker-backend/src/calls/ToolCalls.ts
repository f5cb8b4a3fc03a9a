/*
 * The calls in flight on this replica, and the entry points that reach them: a client's call
 * (`forward`), its answer to a backend's question (`answer`, through the AnswerRouter), its
 * cancellation (`cancel`), a 2026-07-28 client's retry of a held call (`resume`), the end of a
 * client session or a backend, and shutdown (`drain`, `close`).
 *
 * Each call is one ToolCall (state, timer, end, sink) with two halves made here: its client half
 * for the client's era (`sessionClient`: a 2025-11-25 session; `statelessClient`: a 2026-07-28
 * caller, asked through `input_required` rounds when `requestStates` is configured, else never)
 * and its backend half, the leg of its backend's era: LegacyLeg (a session per client and
 * backend) or ModernLeg (stateless rounds). What happens after the leg is the same for every
 * call: the final response goes to the client unless the call was cancelled, a failure becomes
 * one JSON-RPC error naming the backend (backendErrors.ts), and the call's gateway ids and
 * published rounds are retired whatever the outcome.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BackendChannels } from '../backend/backendChannels';
import {
  BackendError,
  backendFailure,
  backendRemoved,
  backendTimeout,
  brokerShuttingDown,
  toClientError,
} from '../backend/backendErrors';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import {
  OpenedRequestState,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';
import type { ClientResponseContext, ClientResponseOutcome } from '../types';
import { AnswerRouter, ClientAnsweredError } from './AnswerRouter';
import type { ClientAnswer, ClientMessageSink, InputRequiredCaller, InputRetry } from './callTypes';
import type { ElicitationIdMap } from './ElicitationIdMap';
import { HeldCalls } from './HeldCalls';
import type { SignalBus } from '../replicas/SignalBus';
import { SessionCancellations } from './SessionCancellations';
import { InputRequiredClient } from './InputRequiredClient';
import { LegacyLeg } from './LegacyLeg';
import { ModernLeg } from './ModernLeg';
import { SessionClient } from './SessionClient';
import { TaskStreamAsking } from './TaskStreamAsking';
import { StatelessInputAnswers } from './StatelessInputAnswers';
import { type CallClient, type CallLeg, type ForwardedToolCall, ToolCall } from './ToolCall';
import { UnaskableClient } from './UnaskableClient';
import type { UrlElicitationPolicy } from './urlElicitations';
import type { BrokerTelemetry } from '../telemetry/BrokerTelemetry';

/** Options of {@link ToolCalls}. */
export interface ToolCallsOptions {
  logger: LoggerService;
  elicitations: ElicitationIdMap;
  /** Finds a live backend by name (answers go to backends, possibly after a config change). */
  backendOf: (backend: string) => BackendChannels | undefined;
  /** Ends the backend sessions of a client session (or stateless caller) with every backend. */
  closeSessionsOf: (owner: string) => Promise<void>;
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
  /**
   * The held rounds and the bus between replicas (`sessionStore: database`): retries, answers,
   * cancellations and session ends may land on another replica. None without it.
   */
  shared?: { store: HeldCallStore; bus: SignalBus };
  /** Counts the clients' cancellations passed on to backends (`mcp_broker.cancellations.relayed`). */
  telemetry?: BrokerTelemetry;
  /** What a backend's URL elicitation may point at (urlElicitations.ts); absent: unchecked. */
  urlElicitations?: UrlElicitationPolicy;
}

/** The calls in flight on this replica; see the file comment. */
export class ToolCalls {
  private readonly inFlight = new Map<string, ToolCall>();
  /** Resolved (and emptied) whenever the last call in flight ends. */
  private readonly idleWaiters: Array<() => void> = [];
  private readonly router: AnswerRouter;
  private readonly held: HeldCalls | undefined;
  private readonly sealer: RequestStateSealer | undefined;
  private readonly legacyLeg: LegacyLeg;
  private readonly modernLeg: ModernLeg;
  private readonly sessionCancellations: SessionCancellations | undefined;

  constructor(private readonly options: ToolCallsOptions) {
    const { logger, requestStates: sealer, shared } = options;
    this.sealer = sealer;
    this.sessionCancellations = shared && new SessionCancellations(shared.bus, logger);
    this.router = new AnswerRouter({
      logger,
      elicitations: options.elicitations,
      statelessInputs: new StatelessInputAnswers({
        logger,
        shared,
        answerTtlMs: options.elicitations.ttlMs,
      }),
      backendOf: options.backendOf,
      requestTimeoutMs: options.requestTimeoutMs,
    });
    this.held =
      sealer &&
      new HeldCalls({
        logger,
        responder: this.router,
        isRunning: call => this.inFlight.has(call.id),
        sealer,
        shared,
        toolCallTimeoutMs: options.toolCallTimeoutMs,
      });
    this.legacyLeg = new LegacyLeg({
      logger,
      requestTimeoutMs: options.requestTimeoutMs,
      urlElicitations: options.urlElicitations,
    });
    this.modernLeg = new ModernLeg({
      logger,
      paramHeadersOf: options.paramHeadersOf,
      urlElicitations: options.urlElicitations,
    });
  }

  /**
   * The client half of a call of a 2025-11-25 client session: the backend's questions reach the
   * client on the call's stream under gateway ids; its cancellation and DELETE may come through
   * another replica.
   */
  sessionClient(sessionId: string, capabilities: RelayedClientCapabilities): CallClient {
    return new SessionClient(sessionId, capabilities, this.router, this.sessionCancellations);
  }

  /**
   * Asks client session `sessionId`, on `sink` (its `tasks/result` stream), the requests of
   * `backend`'s task session, under gateway ids answered as a call's are (TaskStreamAsking).
   */
  taskStreamAsking(sessionId: string, backend: string, sink: ClientMessageSink): TaskStreamAsking {
    return new TaskStreamAsking(backend, sessionId, sink, this.router);
  }

  /**
   * The client half of a call of a stateless 2026-07-28 caller (`owner`: its pool key): asked
   * through `input_required` rounds when `requestStates` is configured, else never (the
   * backend's questions are refused). `onEnd` runs once when the backend call is over.
   */
  statelessClient(parts: {
    owner: string;
    capabilities: RelayedClientCapabilities;
    caller: InputRequiredCaller;
    onEnd?: () => void;
  }): CallClient {
    const { held, sealer } = this;
    if (held === undefined || sealer === undefined) {
      return new UnaskableClient({
        ...parts,
        logger: this.options.logger,
        requestTimeoutMs: this.options.requestTimeoutMs,
      });
    }
    return new InputRequiredClient({ ...parts, held, sealer });
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
  async forward(request: ForwardedToolCall, sink: ClientMessageSink): Promise<void> {
    const call = new ToolCall(request, this.legOf(request), this.options.toolCallTimeoutMs);
    // The promise is handed on, and `run` bound rather than wrapped: no pass-through frames.
    return call.client.open(call, sink, this.run.bind(this, call));
  }

  /** The backend half of a call: the leg of its backend's era. */
  private legOf(request: ForwardedToolCall): CallLeg {
    const era = request.backendEra ?? request.backend.era;
    return era === 'modern' ? this.modernLeg : this.legacyLeg;
  }

  private async run(call: ToolCall): Promise<void> {
    const { sink, client } = call;
    this.inFlight.set(call.id, call);
    call.startTimer();
    const unwatch = client.watch(call);
    const onClientGone = () => call.end('client-gone');
    sink.clientGone.addEventListener('abort', onClientGone);
    if (sink.clientGone.aborted) onClientGone();

    try {
      const final = await call.leg.run(call);
      // A result that arrived while the cancellation was on its way is not the client's to see.
      if (call.endReason !== 'cancelled') sink.send(final);
    } catch (error) {
      await client.failed(call);
      this.finishFailed(call, error);
    } finally {
      if (call.endReason === 'cancelled' || call.endReason === 'client-gone') {
        this.options.telemetry?.metrics.cancellationRelayed(call.backend, call.endedFrom);
      }
      call.dispose();
      sink.clientGone.removeEventListener('abort', onClientGone);
      unwatch?.();
      this.inFlight.delete(call.id);
      if (this.inFlight.size === 0) this.notifyIdle();
      sink.end();
      client.ended(call);
      const retired = this.router.callEnded(call);
      if (retired !== undefined) await retired;
    }
  }

  /** Answers the client of a call that failed or was ended (or, where MCP says so, nothing). */
  private finishFailed(call: ToolCall, error: unknown): void {
    const reason = call.endReason;
    const { clientRequestId } = call.request;
    const { sink } = call;
    // Cancelled calls end without a response (MCP), and a client that is gone cannot read one.
    if (reason === 'client-gone' || reason === 'cancelled' || reason === 'input-expired') return;
    if (reason === 'missing-capability' && call.clientError !== undefined) {
      sink.send({ jsonrpc: '2.0', id: clientRequestId, error: call.clientError });
      return;
    }
    if (error instanceof ClientAnsweredError) {
      sink.send({
        jsonrpc: '2.0',
        id: clientRequestId,
        error: {
          code: JsonRpcErrorCode.InternalError,
          message: `The client refused an input request of MCP server "${call.backend}"`,
          data: { backend: call.backend, clientError: error.error },
        },
      });
      return;
    }
    let failure: BackendError;
    if (reason === 'shutdown') failure = brokerShuttingDown(call.backend);
    else if (reason === 'timeout') {
      failure = backendTimeout(call.backend, this.options.toolCallTimeoutMs);
    } else if (reason === 'backend-removed') failure = backendRemoved(call.backend);
    else {
      failure = backendFailure(call.backend, error, call.session !== undefined || call.stateless);
    }
    const { misbehaviours } = call.request.backend;
    if (reason === 'timeout') misbehaviours.record('timeouts');
    else if (failure.options.transport?.failure === 'too-large') {
      misbehaviours.record('oversizedMessages');
    }
    this.options.logger.info(
      `${call.method} to MCP server "${call.backend}" failed: ${failure.message}`,
    );
    sink.send({ jsonrpc: '2.0', id: clientRequestId, error: toClientError(failure) });
  }

  /**
   * Resumes a held call with a 2026-07-28 client's retry (see HeldCalls.resume): throws
   * {@link RequestStateRefusal} before anything reaches a backend when the state is refused.
   * Resolves with the opened state when it is a 2026-07-28 backend's round (nothing written):
   * the caller then forwards the retry to that backend as a new call.
   */
  resume(retry: InputRetry, sink: ClientMessageSink): Promise<OpenedRequestState | undefined> {
    if (this.held === undefined) return Promise.reject(new RequestStateRefusal('malformed'));
    return this.held.resume(retry, sink);
  }

  /**
   * Routes a client's JSON-RPC response (to an elicitation or sampling request) to the backend
   * that asked, with the backend's original id (and the person's credential, see AnswerRouter).
   * Unknown, used, expired or foreign ids reach nobody.
   */
  answer(
    clientSessionId: string,
    answer: ClientAnswer,
    personalHeaders?: ClientResponseContext['personalHeaders'],
  ): Promise<ClientResponseOutcome> {
    return this.router.answer(clientSessionId, answer, personalHeaders);
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
    for (const call of this.inFlight.values()) {
      if (call.owner === clientSessionId && call.requestKey === key) {
        const reason = typeof params.reason === 'string' ? params.reason : undefined;
        call.end('cancelled', reason);
        return true;
      }
    }
    return false;
  }

  /**
   * A client's `notifications/cancelled` of a call not in flight here: with a shared store it is
   * passed on to the replica that holds the call (bounded per session). Never throws.
   */
  async cancelElsewhere(
    clientSessionId: string,
    params: { requestId?: unknown; reason?: unknown } | undefined,
  ): Promise<void> {
    const requestId = params?.requestId;
    if (typeof requestId !== 'string' && typeof requestId !== 'number') return;
    const reason = typeof params?.reason === 'string' ? params.reason : undefined;
    await this.sessionCancellations?.cancel(clientSessionId, requestId, reason);
  }

  /** The session was ended here (DELETE): its calls on other replicas end too. Never throws. */
  async announceSessionEnd(clientSessionId: string): Promise<void> {
    await this.sessionCancellations?.sessionEnded(clientSessionId);
  }

  /** Ends everything a client session had: its calls (cancelled at the backends), ids and sessions. */
  async closeClientSession(clientSessionId: string): Promise<void> {
    for (const call of this.inFlight.values()) {
      if (call.owner === clientSessionId) call.end('client-gone');
    }
    await Promise.all([
      this.options.elicitations.releaseClientSession(clientSessionId),
      this.options.closeSessionsOf(clientSessionId),
    ]);
  }

  /** Ends every call to a backend that was removed (its connection closes the sessions with it). */
  removeBackend(backend: string): void {
    for (const call of this.inFlight.values()) {
      if (call.backend === backend) call.abort('backend-removed');
    }
  }

  /**
   * Shutdown, first half: lets the calls in flight finish for up to `deadlineMs`, then ends each
   * remaining one with a "shutting down, retry" error to its client (and a cancellation to its
   * backend). Resolves once no call is in flight.
   */
  async drain(deadlineMs: number): Promise<void> {
    // A held call waits for a client that may come back only after the shutdown: end it now.
    for (const call of this.inFlight.values()) {
      if (this.held?.isHolding(call)) call.end('shutdown');
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
    for (const call of this.inFlight.values()) call.end('shutdown');
    await new Promise<void>(resolve => this.idleWaiters.push(resolve));
  }

  /** Shutdown, second half: ends every call still running (unanswered). */
  async close(): Promise<void> {
    for (const call of this.inFlight.values()) call.abort('shutdown');
    this.notifyIdle();
    await this.options.shared?.bus.stop();
  }

  private notifyIdle(): void {
    for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
