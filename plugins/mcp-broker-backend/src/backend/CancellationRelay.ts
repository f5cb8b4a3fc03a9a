/*
 * A 2025-11-25 client's `notifications/cancelled` and DELETE across replicas (spec §4, §6).
 *
 * A session's `tools/call` runs on the replica that took its POST; without sticky sessions the
 * client's cancellation (or the DELETE of its session) may land on another replica, which does
 * not hold the call. That replica records the cancellation in the shared store
 * ({@link CancellationRelay.record}), keyed by the session it verified and the client's request
 * id as its raw JSON token; the replica holding the call finds it and cancels the call exactly as
 * a local `notifications/cancelled` does (the backend is told with its own id, the client's
 * stream ends without a result), then deletes the row.
 *
 * Cost: nothing per call but a Set entry. A replica polls only while it has calls of client
 * sessions in flight: ONE batched query per {@link CANCELLATION_POLL_MS} for all of them (the
 * live sessions among theirs, with their recorded cancellations). That query also tells when a
 * session was ended elsewhere (DELETE, expiry): its calls here end as for a local DELETE, without
 * waiting for the session sweep. Without a shared store (one replica) there is no relay at all.
 *
 * Guarantees: a cancellation acts only on a call of the session that sent it (the key is the
 * verified session), once (the row is deleted after acting; ending a call is idempotent); one
 * for a call that already ended, or never ran, does nothing and expires after
 * {@link CANCELLATION_TTL_MS} (swept with the elicitation ids). A cancellation that arrives
 * before the holder registered the call (the two POSTs raced) still reaches it while unexpired.
 *
 * Failure modes: a failed record is logged (the client was answered 202 anyway: notifications
 * get no error reply); a failed poll is logged once until polls succeed again and ends nothing;
 * a failed delete is logged (the row expires; acting on it again is a no-op).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';

/**
 * How often a replica with session calls in flight reads the shared store: a cancellation takes
 * effect within about this long. Not the held-call mailbox's 100 ms: that one sits on the path
 * of a client waiting for its retry's output, while this poll runs whenever any session call is
 * in flight (under load: all the time, on every replica), and a quarter second before a
 * cancellation lands is not noticeable to whoever pressed "stop".
 */
export const CANCELLATION_POLL_MS = 250;

/**
 * How long a relayed cancellation waits for the replica holding its call: far longer than a
 * poll, and than the call's POST may take to be registered when the cancellation overtook it.
 */
export const CANCELLATION_TTL_MS = 60_000;

/** Longest reason kept from a client's `notifications/cancelled` (the backend is told it). */
const MAX_REASON_LENGTH = 1_000;

/** A client's cancellation of one of its session's requests. */
export interface RelayedCancellation {
  /** The verified client session. */
  readonly sessionId: string;
  /** The client's request id as its JSON token (`"7"` and `7` differ). */
  readonly requestKey: string;
  readonly reason?: string;
}

/** What one poll found for the sessions asked about. */
export interface CancellationPoll {
  /** Those of the sessions that exist and have not expired. */
  readonly liveSessions: ReadonlySet<string>;
  /** The unexpired cancellations recorded for those sessions. */
  readonly cancellations: readonly RelayedCancellation[];
}

/** Relayed cancellations, shared by every replica (the plugin's database). */
export interface CancellationStore {
  /** Records a cancellation until `expiresAt` (epoch ms). */
  record(cancellation: RelayedCancellation, expiresAt: number): Promise<void>;
  /** One query: which of these sessions are live at `now`, and their cancellations. */
  poll(sessionIds: readonly string[], now: number): Promise<CancellationPoll>;
  /** Deletes these cancellations (they were acted on). */
  remove(cancellations: readonly RelayedCancellation[]): Promise<void>;
  /** Deletes every cancellation expired at `now`. */
  deleteExpired(now: number): Promise<void>;
}

/** A call of a client session in flight on this replica, as the relay sees it. */
export interface RelayedCall {
  readonly sessionId: string;
  /** The client's request id as its JSON token. */
  readonly requestKey: string;
  /** The client cancelled the call on another replica. */
  cancel(reason: string | undefined): void;
  /** The session ended on another replica (DELETE) or expired. */
  sessionEnded(): void;
}

/** Options of {@link CancellationRelay}. */
export interface CancellationRelayOptions {
  store: CancellationStore;
  logger: LoggerService;
  /** Default {@link CANCELLATION_POLL_MS}. */
  pollMs?: number;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
}

/** See the file comment. */
export class CancellationRelay {
  private readonly watched = new Set<RelayedCall>();
  private readonly pollMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private failing = false;
  private stopped = false;

  constructor(private readonly options: CancellationRelayOptions) {
    this.pollMs = options.pollMs ?? CANCELLATION_POLL_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * Watches a call of a client session while it is in flight here; call the returned function
   * when it ends. The poll runs only while something is watched.
   */
  watch(call: RelayedCall): () => void {
    this.watched.add(call);
    this.schedule();
    return () => {
      this.watched.delete(call);
      if (this.watched.size === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  /**
   * Records the client's cancellation of `requestId` in `sessionId` (verified by the caller) for
   * the replica holding the call. Never throws: a store failure is logged.
   */
  async record(sessionId: string, requestId: string | number, reason?: string): Promise<void> {
    try {
      const cancellation: RelayedCancellation = {
        sessionId,
        requestKey: JSON.stringify(requestId),
        ...(reason === undefined ? {} : { reason: reason.slice(0, MAX_REASON_LENGTH) }),
      };
      await this.options.store.record(cancellation, this.now() + CANCELLATION_TTL_MS);
    } catch (error) {
      this.options.logger.warn(
        `Could not pass a client's cancellation on to the other broker replicas: ${error}`,
      );
    }
  }

  /** Stops polling (shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.polling || this.stopped || this.watched.size === 0) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, this.pollMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      await this.pollOnce();
    } finally {
      this.polling = false;
      this.schedule();
    }
  }

  private async pollOnce(): Promise<void> {
    const calls = [...this.watched];
    const sessionIds = [...new Set(calls.map(call => call.sessionId))];
    let found: CancellationPoll;
    try {
      found = await this.options.store.poll(sessionIds, this.now());
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn(
          `Could not read cancellations given on other broker replicas (retrying): ${error}`,
        );
      }
      this.failing = true;
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.options.logger.info('Reading cancellations given on other broker replicas again');
    }
    const byKey = new Map(found.cancellations.map(c => [keyOf(c), c]));
    const actedOn: RelayedCancellation[] = [];
    for (const call of calls) {
      if (!this.watched.has(call)) continue; // ended while the poll ran
      const cancellation = byKey.get(keyOf(call));
      if (cancellation !== undefined) {
        call.cancel(cancellation.reason);
        actedOn.push(cancellation);
      } else if (!found.liveSessions.has(call.sessionId)) {
        call.sessionEnded();
      }
    }
    if (actedOn.length === 0) return;
    await this.options.store
      .remove(actedOn)
      .catch(error =>
        this.options.logger.warn(`Could not delete cancellations already acted on: ${error}`),
      );
  }
}

function keyOf(call: { sessionId: string; requestKey: string }): string {
  return JSON.stringify([call.sessionId, call.requestKey]);
}
