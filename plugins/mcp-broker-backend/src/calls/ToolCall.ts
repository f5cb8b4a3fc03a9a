/*
 * One client call in flight (a `tools/call`, or a `prompts/get` / `resources/read` to a
 * 2026-07-28 backend), from its admission to its answer: what it asks of its backend
 * (ForwardedToolCall), its state, its timer, how it ends, the sink it writes to, and its two
 * halves. The client half (`client`, a {@link CallClient}: SessionClient for a 2025-11-25
 * session, InputRequiredClient or UnaskableClient for a 2026-07-28 caller) is where everything
 * that depends on the client's era lives: whose backend sessions carry the call, where the
 * backend's questions go, what follows the call's end. The backend half (`leg`, a
 * {@link CallLeg}: LegacyLeg or ModernLeg) runs the call in the backend's era and asks the client
 * half whenever the backend asks something (`call.client.ask(...)`, `call.client.answerInputs`),
 * so no leg knows which era the client speaks. ToolCalls keeps the calls of this replica.
 *
 * Ending is one operation with one outcome, whoever asks first (the client cancelling or going
 * away, `toolCallTimeout`, the backend's removal, shutdown, an input the client never gave): the
 * call records why, and a call whose request already went to a 2025-era backend is cancelled
 * there (`notifications/cancelled` with the backend's id, through the leg's `cancel`) before its
 * stream is closed — a backend that treats a closed stream as the end of the call can still
 * match the notification. A 2026-07-28 call is cancelled by closing its stream. Either way the
 * call's signal aborts, which ends the backend exchange; the leg's own promise then settles and
 * ToolCalls answers the client (or not: a cancelled call ends without a response, as MCP says).
 */
import { randomUUID } from 'node:crypto';
import type { BackendChannels } from '../backend/backendChannels';
import type { BackendEndpoint } from '../backend/backendTransport';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { JsonRpcErrorObject, JsonRpcId } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { ProtocolEra } from '../protocol/modernEra';
import type { ClientRequestTelemetry } from '../telemetry/BrokerTelemetry';
import type { TaskCreation } from '../types';
import type { ClientMessageSink } from './callTypes';

/** What a call asks of its backend: a client's request, already routed; see the file comment. */
export interface ForwardedToolCall {
  /**
   * The call's client half (made by ToolCalls: `sessionClient`, `statelessClient`): whose backend
   * sessions carry the call, its relayed capabilities, where the backend's questions go.
   */
  client: CallClient;
  /** The backend that owns the tool (its channels). */
  backend: BackendChannels;
  /**
   * The era of the call's backend half when it is not the backend's detected era: a client's
   * retry of a 2026-07-28 backend's `input_required` goes back to that era.
   */
  backendEra?: ProtocolEra;
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
  /**
   * The client request's telemetry: each request the call sends to its backend is measured and
   * traced as its child (the trace context goes with it). Absent: not measured.
   */
  telemetry?: ClientRequestTelemetry;
  /**
   * A 2026-07-28 backend may answer with a task (docs/contracts/tasks-and-apps.md §2.12.2): the
   * backend request goes through it (ModernLeg), which decides whether the tasks extension is
   * declared to the backend and turns a task answer into the client's. Absent: no task.
   */
  taskCreation?: TaskCreation;
}

/** A 2026-07-28 backend's `input_required` answer during a call, as the client half gets it. */
export interface InputRound {
  /** 1 for the call's first round. */
  readonly number: number;
  /** The backend's input requests (URL elicitations already screened), by its own keys. */
  readonly inputRequests: Record<string, unknown> | undefined;
  /** The backend's own `requestState`, if it gave one. */
  readonly requestState: string | undefined;
  /** The backend's response (re-addressed to the client's id) that carried the round. */
  readonly response: Record<string, unknown>;
}

/**
 * What the client half makes of an {@link InputRound}: the answers to retry the backend with,
 * or the call's final response (the round goes to the client, or it cannot be answered).
 */
export type InputRoundOutcome =
  | { readonly inputResponses: Record<string, unknown> }
  | { readonly final: Record<string, unknown> };

/**
 * The client half of a call: everything that depends on the client's era. The backend half
 * calls it; see the file comment.
 */
export interface CallClient {
  /**
   * Whose backend sessions carry the call: the client session's id, or a stateless caller's
   * pool key (`ModernCaller.poolKey`). Cancellations and answers are matched within it.
   */
  readonly owner: string;
  /** What the client declared that the broker relays (elicitation, sampling, roots). */
  readonly capabilities: RelayedClientCapabilities;
  /**
   * Answers the client's request with `call`, which `run` runs to its end: resolves when the
   * client's request is answered (a held call may go on after its first request).
   */
  open(call: ToolCall, sink: ClientMessageSink, run: () => Promise<void>): Promise<void>;
  /** Lets the call be ended from elsewhere (another replica) while it runs; the unwatch. */
  watch(call: ToolCall): (() => void) | undefined;
  /**
   * A 2025-era backend's server-to-client request during the call (elicitation, sampling,
   * roots; a URL elicitation already screened), asked on the backend session `session`.
   */
  ask(call: ToolCall, session: LegacySessionRef, request: ParsedJsonRpcMessage): Promise<void>;
  /** A 2026-07-28 backend asked for input: what the call does next. */
  answerInputs(call: ToolCall, round: InputRound): Promise<InputRoundOutcome>;
  /**
   * Runs before each message of the call's 2025-era stream is handled (a held call checks
   * whether its client moved to another replica); undefined when nothing needs to.
   */
  readonly beforeMessage: ((call: ToolCall) => Promise<void>) | undefined;
  /** The call failed or was ended before its answer (a held call may have moved elsewhere). */
  failed(call: ToolCall): Promise<void>;
  /** The backend call is over (its sink ended): whatever the client half holds for it goes. */
  ended(call: ToolCall): void;
}

/** The backend half of a call: runs it in its backend's era (LegacyLeg, ModernLeg). */
export interface CallLeg {
  /** Runs `call` to its answer (the client's final response); throws what kept it from one. */
  run(call: ToolCall): Promise<Record<string, unknown>>;
}

/** Why a call ended before its backend answered. */
export type CallEndReason =
  | 'timeout'
  | 'client-gone'
  | 'cancelled'
  | 'backend-removed'
  | 'shutdown'
  | 'input-expired'
  | 'missing-capability';

/** What the backend is told when the broker, not the client, ends a call. */
const CANCELLATION_REASONS: Record<CallEndReason, string> = {
  timeout: 'the broker’s tool call timeout expired',
  'client-gone': 'the client disconnected',
  cancelled: 'cancelled by the client',
  'backend-removed': 'the server was removed from the broker',
  shutdown: 'the broker is shutting down',
  'input-expired': 'the client did not send the requested input within the broker’s TTL',
  'missing-capability': 'the client cannot answer the server’s request (capability not declared)',
};

/** One call in flight; see the file comment. */
export class ToolCall {
  /** The call's own id (gateway ids, held rounds and replica signals are keyed by it). */
  readonly id = randomUUID();
  /** Why the call ended early, once it did. */
  endReason: CallEndReason | undefined;
  /** What the client is answered when the broker ended the call for a reason of the client's. */
  clientError: JsonRpcErrorObject | undefined;
  /** Set before the call's first gateway id is registered: only then are there ids to retire. */
  registeredIds = false;
  /** The 2025-era session the request went out on, once it did (held rounds name it). */
  session: LegacySessionRef | undefined;
  /** Set once the request went to a 2026-07-28 backend (nothing to cancel but the stream). */
  stateless = false;
  /** Where the client's cancellation (or its session's end) came from: here, or another replica. */
  endedFrom: 'client' | 'replica' = 'client';
  /** The backend's name. */
  readonly backend: string;
  /** Whose backend sessions carry the call (a client session, or a stateless pool key). */
  readonly owner: string;
  /** The client half: everything that depends on the client's era (see {@link CallClient}). */
  readonly client: CallClient;
  /** The method sent to the backend. */
  readonly method: string;
  /**
   * Where the call writes what the client sees, given by {@link attach} before the call runs
   * (the client's answer, or a held call's output).
   */
  sink!: ClientMessageSink;
  /** Aborts when the call ended; the backend exchange listens to it. */
  readonly signal: AbortSignal;
  private readonly controller = new AbortController();
  private timer: NodeJS.Timeout | undefined;
  private readonly expiryTimers: NodeJS.Timeout[] = [];
  private cancelAtBackend: ((reason: string) => Promise<void>) | undefined;

  constructor(
    /** What the client asked, routed to its backend. */
    readonly request: ForwardedToolCall,
    /** The backend half, in the backend's era. */
    readonly leg: CallLeg,
    /** `mcpBroker.toolCallTimeout`. */
    private readonly timeoutMs: number,
  ) {
    this.backend = request.backend.endpoint.name;
    this.client = request.client;
    this.owner = request.client.owner;
    this.method = request.method ?? 'tools/call';
    this.signal = this.controller.signal;
  }

  /**
   * The client's id of the call as JSON (`"7"` and `7` differ): cancellations from another
   * replica name the call by it.
   */
  get requestKey(): string {
    return JSON.stringify(this.request.clientRequestId);
  }

  /** Gives the call its sink (its client half does, when it opens the call). */
  attach(sink: ClientMessageSink): void {
    if (this.sink !== undefined) throw new Error('a call has one sink');
    this.sink = sink;
  }

  /** (Re)starts `toolCallTimeout` (it runs while a client waits, not while a call is held). */
  startTimer(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.end('timeout'), this.timeoutMs);
  }

  stopTimer(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** A timer that retires one of the call's gateway ids at its expiry (cleared at the end). */
  addExpiry(timer: NodeJS.Timeout): void {
    this.expiryTimers.push(timer);
  }

  /**
   * The request went out on `session`; `cancel` tells the backend, should the call end early.
   */
  sentOn(session: LegacySessionRef, cancel: (reason: string) => Promise<void>): void {
    this.session = session;
    this.cancelAtBackend = cancel;
  }

  /**
   * Ends the call once, for `reason` (see the file comment): `clientReason` is what the client
   * gave with its cancellation, `clientError` what the client is answered (a missing capability).
   */
  end(reason: CallEndReason, clientReason?: string, clientError?: JsonRpcErrorObject): void {
    if (this.endReason !== undefined) return;
    this.endReason = reason;
    this.clientError = clientError;
    const cancel = this.cancelAtBackend;
    if (cancel === undefined || this.stateless) {
      this.controller.abort();
      return;
    }
    void cancel(clientReason ?? CANCELLATION_REASONS[reason]).finally(() =>
      this.controller.abort(),
    );
  }

  /** {@link end}, for a cancellation (or session end) that came from another replica. */
  endFromReplica(reason: 'cancelled' | 'client-gone', clientReason?: string): void {
    if (this.endReason !== undefined) return;
    this.endedFrom = 'replica';
    this.end(reason, clientReason);
  }

  /** Stops the call at once, without telling the backend (its backend or the broker is going). */
  abort(reason: 'backend-removed' | 'shutdown'): void {
    this.endReason ??= reason;
    this.controller.abort();
  }

  /** The call is over: its timers go. */
  dispose(): void {
    this.stopTimer();
    this.expiryTimers.forEach(clearTimeout);
    this.expiryTimers.length = 0;
  }
}
