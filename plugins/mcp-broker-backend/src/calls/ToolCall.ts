/*
 * One client call in flight (a `tools/call`, or a `prompts/get` / `resources/read` to a
 * 2026-07-28 backend): its state, its timer, how it ends, and the sink it writes to. A leg per
 * backend era runs it (LegacyLeg, ModernLeg); ToolCalls keeps the calls of this replica.
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
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import type { ClientMessageSink, ForwardedToolCall } from './callTypes';

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
  /** The method sent to the backend. */
  readonly method: string;
  /**
   * Where the call writes what the client sees: given at creation, or by {@link attach} before
   * the call runs (a held call's output).
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
    /** `mcpBroker.toolCallTimeout`. */
    private readonly timeoutMs: number,
    sink?: ClientMessageSink,
  ) {
    this.backend = request.backend.endpoint.name;
    this.owner = request.clientSessionId;
    this.method = request.method ?? 'tools/call';
    this.signal = this.controller.signal;
    if (sink !== undefined) this.sink = sink;
  }

  /** Gives a call created without one its sink (a held call's output). */
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
