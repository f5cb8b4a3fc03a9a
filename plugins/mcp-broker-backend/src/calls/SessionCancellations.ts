/*
 * A 2025-11-25 client's `notifications/cancelled`, and the DELETE of its session, across
 * replicas (spec §4, §6), over the bus between replicas (replicas/SignalBus.ts).
 *
 * A session's `tools/call` runs on the replica that took its POST; without sticky sessions the
 * client's cancellation (or the DELETE of its session) may land on another replica, which does
 * not hold the call and cannot know its call id. That replica sends the session a signal: a
 * `cancel` naming the client's request id as its raw JSON token, or an `end` for a DELETE. Every
 * replica with calls of that session in flight waits for the session's signals, and ends the
 * matching call exactly as a local `notifications/cancelled` or DELETE does (the backend is told
 * with its own id, the client's stream ends without a result).
 *
 * Bounds: a session holds at most {@link MAX_PENDING_CANCELLATIONS_PER_SESSION} unconsumed
 * signals (exactly, however many replicas take its notifications at once), so a client cannot
 * make the table grow by cancelling requests that run nowhere, made-up or repeated (further ones
 * are dropped with a warning; the client was answered 202 anyway, as notifications are); with
 * `sessionLimits.perPrincipal` sessions, a client holds at most their product. Each lives
 * {@link CANCELLATION_TTL_MS}, long enough for a cancellation that overtook its call's POST to
 * still reach it. A cancellation is consumed by the call it matches; a session's
 * end is left for every replica and expires.
 *
 * Cost: nothing per call but a waiter in memory; the bus reads at most once per interval for all
 * of them (polling, or on PostgreSQL the catch-up read of the new waiters), once per notified
 * signal, and only while calls of sessions are in flight. Without a shared store there is no bus.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { sessionAddress, type SignalBus } from '../replicas/SignalBus';
import { isPlainObject } from '../protocol/jsonRpc';
import type { ToolCall } from './ToolCall';

/**
 * How often a replica with session calls in flight reads their signals: a cancellation takes
 * effect within about this long (a quarter second is not noticeable to whoever pressed "stop",
 * and this wait runs whenever any session call is in flight: under load, all the time).
 */
export const SESSION_SIGNAL_POLL_MS = 250;

/** How long a cancellation or a session's end waits for the replicas holding its calls. */
export const CANCELLATION_TTL_MS = 60_000;

/** Most signals a session may have waiting (the rest are dropped: no unbounded rows per client). */
export const MAX_PENDING_CANCELLATIONS_PER_SESSION = 32;

/** Longest reason kept from a client's `notifications/cancelled` (the backend is told it). */
const MAX_REASON_LENGTH = 1_000;

/** A `cancel` signal's payload. */
interface Cancellation {
  /** The client's request id as its JSON token (`"7"` and `7` differ). */
  requestKey: string;
  reason?: string;
}

/** See the file comment. */
export class SessionCancellations {
  constructor(
    private readonly bus: SignalBus,
    private readonly logger: LoggerService,
  ) {}

  /**
   * Lets a call of a client session be cancelled, or its session ended, from another replica,
   * while it is in flight here; returns the function that stops it.
   */
  watch(call: ToolCall, requestKey: string): () => void {
    return this.bus.watch(
      sessionAddress(call.owner),
      signal => {
        if (signal.kind === 'end') {
          call.endFromReplica('client-gone');
          return false; // every replica with calls of the session must see it
        }
        if (signal.kind !== 'cancel') return false;
        const cancellation = readCancellation(signal.payload);
        if (cancellation?.requestKey !== requestKey) return false;
        call.endFromReplica('cancelled', cancellation.reason);
        return true;
      },
      SESSION_SIGNAL_POLL_MS,
    );
  }

  /**
   * Passes the client's cancellation of `requestId` in `sessionId` (verified by the caller) on
   * to the replica holding the call. Never throws: a store failure is logged.
   */
  async cancel(sessionId: string, requestId: string | number, reason?: string): Promise<void> {
    const cancellation: Cancellation = {
      requestKey: JSON.stringify(requestId),
      ...(reason === undefined ? {} : { reason: reason.slice(0, MAX_REASON_LENGTH) }),
    };
    try {
      const sent = await this.bus.sendBounded(
        {
          address: sessionAddress(sessionId),
          kind: 'cancel',
          payload: JSON.stringify(cancellation),
        },
        CANCELLATION_TTL_MS,
        MAX_PENDING_CANCELLATIONS_PER_SESSION,
      );
      if (!sent) {
        this.logger.warn(
          `MCP broker: dropped a client's cancellation: its session already has ` +
            `${MAX_PENDING_CANCELLATIONS_PER_SESSION} waiting for other replicas`,
        );
      }
    } catch (error) {
      this.logger.warn(
        `Could not pass a client's cancellation on to the other broker replicas: ${error}`,
      );
    }
  }

  /**
   * The session was ended here (DELETE): its calls on the other replicas end now rather than at
   * their next session sweep. Never throws: a store failure is logged (the sweeps still end them).
   */
  async sessionEnded(sessionId: string): Promise<void> {
    try {
      await this.bus.send({ address: sessionAddress(sessionId), kind: 'end' }, CANCELLATION_TTL_MS);
    } catch (error) {
      this.logger.warn(`Could not tell the other broker replicas that a session ended: ${error}`);
    }
  }
}

function readCancellation(payload: string | undefined): Cancellation | undefined {
  try {
    const value: unknown = JSON.parse(payload ?? '');
    if (!isPlainObject(value) || typeof value.requestKey !== 'string') return undefined;
    return {
      requestKey: value.requestKey,
      ...(typeof value.reason === 'string' ? { reason: value.reason } : {}),
    };
  } catch {
    return undefined;
  }
}
