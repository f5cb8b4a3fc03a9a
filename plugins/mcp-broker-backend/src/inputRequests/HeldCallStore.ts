/*
 * Held tool calls across replicas (spec §9 with §6: no sticky sessions). A 2026-07-28 client's
 * call that waits for input is held by the replica that reads its backend stream (the holder);
 * the client's retry may land on any replica. This store is how another replica resumes it:
 *
 * 1. Before the client sees an `input_required` round, the holder publishes it
 *    (`publishRound`): the backend, the backend session, and the backend's raw request id of
 *    every input key — kept here, not in `requestState`, so the client never learns the broker's
 *    backend session id.
 * 2. A retry that finds no held call locally opens its `requestState` as usual (single use,
 *    bound to principal, tool and arguments), then claims the round (`claimRound`: one
 *    conditional UPDATE, so one claim per round) BEFORE it answers the backend session itself
 *    with the original ids; so whatever the backend does after the answer, the holder already
 *    sees the claim.
 * 3. The holder checks for a claim when its held stream yields something (and when the hold
 *    times out) and then relays what follows — progress, the next round, the final result or
 *    error — to the claiming replica as `message` signals of the round (replicas/SignalBus.ts),
 *    ending the leg with an `end` signal.
 * 4. The claiming replica waits for those signals, in order, until the end, bounded by
 *    `toolCallTimeout`.
 * 5. A client that goes away from the claiming replica before the end cancels the call (for a
 *    2026-07-28 client, closing the request is the cancellation): that replica sends the call a
 *    `cancel` signal. The holder waits for its call's signals from the first published round on,
 *    so the cancellation reaches the backend exactly as for a local disconnect — also when the
 *    backend has gone silent since the answer. The holder then deletes the call's rows
 *    (`deleteCall`).
 *
 * A retry that lands on the holder touches none of this. Rows expire and are swept with the
 * elicitation ids.
 *
 * A holder that dies (SIGKILL, out of memory, a node lost) takes its backend stream with it: the
 * call's result is lost and cannot be delivered. Each round names its holder's presence id
 * (replicas/ReplicaPresence.ts); once the holder's presence mark lapsed, a retry's claim is
 * refused (`holder-gone`: the client is told to start over), a claiming replica already waiting
 * for the relayed round ends it with an error saying so (`holderGone`, asked every
 * PRESENCE_BEAT_MS), and an answer handed over for it reaches nobody (`deliverAnswer` false).
 *
 * The other direction, for a 2025 client's call to a 2026-07-28 backend (spec §9 "Backends"):
 * the client is asked each input under a gateway id on its call's stream, and its answer may
 * land on any replica. The holder publishes the round before the client sees it (`asked`: the
 * backend's input keys), the answering replica claims the gateway id (ElicitationIdMap, once
 * across replicas) and hands the answer over with `deliverAnswer` — one INSERT … SELECT of an
 * `answer` signal to the call, only while its round is published, so an answer whose call ended
 * (round deleted or expired) reaches nobody and says so. The holder waits for its call's signals
 * while it waits for answers, and `deleteCall`s the round and the signals when the call ends.
 */
import type { JsonRpcId } from '../protocol/jsonRpc';
import type { RawJsonRpcId } from '../protocol/jsonRpcMessage';

/** One published `input_required` round of a held call. */
export interface HeldRound {
  callId: string;
  /** 1 for the first round, then counting up. */
  round: number;
  backend: string;
  backendSessionId?: string;
  protocolVersion: string;
  /** The input keys of the round and the backend's request id (raw JSON token) of each. */
  asked: Array<{ key: string; rawId: RawJsonRpcId }>;
  /** Epoch ms after which nobody may claim the round. */
  expiresAt: number;
}

/** Another replica's claim of a round: the client request it serves. */
export interface RoundClaim {
  clientRequestId: JsonRpcId;
  progressToken?: string | number;
  /** Keys of the round the retry answered (the holder asks the others again). */
  answered: string[];
}

/** Shared state of held calls; see the file comment. */
export interface HeldCallStore {
  /** Publishes the call's current round (replacing the previous one, unclaimed). */
  publishRound(round: HeldRound): Promise<void>;
  /**
   * Claims the call's current round for a retry served by this replica; the round, undefined
   * when there is none to claim (ended, expired or already claimed), or `holder-gone` when the
   * replica holding the call is gone (nothing claimed).
   */
  claimRound(
    callId: string,
    claim: RoundClaim,
    now: number,
    /** Epoch ms until which the claimed round is kept (the holder looks it up meanwhile). */
    keepUntil: number,
  ): Promise<HeldRound | 'holder-gone' | undefined>;
  /**
   * Whether the call's round is still published and the replica holding it is gone at `now`
   * (false once the holder ended the call: its round is deleted).
   */
  holderGone(callId: string, now: number): Promise<boolean>;
  /** The claim of `round` by another replica, if there is one. */
  claimOf(callId: string, round: number): Promise<RoundClaim | undefined>;
  /**
   * Sends `message` (an answer) to the call as a signal, in one statement and only while its
   * round is published and unexpired at `now` and its holder present; false when there is none
   * (the call ended, or died with its replica).
   */
  deliverAnswer(
    callId: string,
    message: string,
    now: number,
    /** Epoch ms until which the message is kept (the holder reads it long before). */
    expiresAt: number,
  ): Promise<boolean>;
  /** Deletes the call's round and signals, its own and those of its relayed rounds (it ended). */
  deleteCall(callId: string): Promise<void>;
  /** Deletes rounds that expired at or before `now`. */
  deleteExpired(now: number): Promise<void>;
}
