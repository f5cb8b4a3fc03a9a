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
 *    times out) and then writes what follows — progress, the next round, the final result or
 *    error — into the mailbox (`append`), ending the leg with an end marker.
 * 4. The claiming replica reads the mailbox in order (`read`) until the end marker, bounded by
 *    `toolCallTimeout`, polling at a short interval (the one polled path of the broker).
 * 5. A client that goes away from the claiming replica before the end marker cancels the call
 *    (for a 2026-07-28 client, closing the request is the cancellation): that replica marks its
 *    claim cancelled (`cancelClaim`). The holder, while it writes a claimed leg, reads the claim
 *    at the same interval; when it sees the mark it cancels the backend call exactly as for a
 *    local disconnect, stops writing and deletes the call's rows (`deleteCall`).
 *
 * A retry that lands on the holder touches none of this. Rows expire and are swept with the
 * elicitation ids. Failure modes: a holder that crashes leaves a claimed round without messages;
 * the claiming replica answers the client with a timeout error at `toolCallTimeout`. The holder
 * takes a claim over when its backend stream yields something after the answer (or at the
 * hold's TTL), so a cancellation marked before that reaches the backend only then.
 *
 * The other direction, for a 2025 client's call to a 2026-07-28 backend (spec §9 "Backends"):
 * the client is asked each input under a gateway id on its call's stream, and its answer may
 * land on any replica. The holder publishes the round before the client sees it (`asked`: the
 * backend's input keys), the answering replica claims the gateway id (ElicitationIdMap, once
 * across replicas) and hands the answer over with `deliverAnswer` — one INSERT … SELECT into the
 * mailbox of the published round, so an answer whose call ended (round deleted or expired)
 * reaches nobody and says so. The holder polls that mailbox while it waits (no end row: the
 * round ends when every answer arrived) and `deleteCall`s both when the call ends.
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
  /** Set when the client of the claiming replica went away: the holder cancels the call. */
  cancelled?: true;
}

/** A mailbox entry: a JSON-RPC message as JSON text, or the end of the leg. */
export interface MailboxEntry {
  seq: number;
  /** Undefined: the leg ended (the last entry the claiming replica reads). */
  message?: string;
}

/** Shared state of held calls; see the file comment. */
export interface HeldCallStore {
  /** Publishes the call's current round (replacing the previous one, unclaimed). */
  publishRound(round: HeldRound): Promise<void>;
  /**
   * Claims the call's current round for a retry served by this replica; the round, or
   * undefined when there is none to claim (ended, expired or already claimed).
   */
  claimRound(
    callId: string,
    claim: RoundClaim,
    now: number,
    /** Epoch ms until which the claimed round is kept (the holder looks it up meanwhile). */
    keepUntil: number,
  ): Promise<HeldRound | undefined>;
  /** The claim of `round` by another replica, if there is one. */
  claimOf(callId: string, round: number): Promise<RoundClaim | undefined>;
  /**
   * Marks this replica's `claim` of the call's `round` cancelled (its client went away); a no-op
   * when the call has moved on to another round or its rows are gone.
   */
  cancelClaim(callId: string, round: number, claim: RoundClaim): Promise<void>;
  /** Appends to the mailbox of the call's `round` (undefined `message`: end of the leg). */
  append(
    callId: string,
    round: number,
    message: string | undefined,
    expiresAt: number,
  ): Promise<void>;
  /** Mailbox entries of the call's `round` after `afterSeq`, in order. */
  read(callId: string, round: number, afterSeq: number): Promise<MailboxEntry[]>;
  /**
   * Appends `message` to the mailbox of the call's published round, in one statement and only
   * while that round is unexpired at `now`; false when there is none (the call ended).
   */
  deliverAnswer(
    callId: string,
    message: string,
    now: number,
    /** Epoch ms until which the message is kept (the holder reads it long before). */
    expiresAt: number,
  ): Promise<boolean>;
  /** Deletes the call's round and mailbox entries (its call ended). */
  deleteCall(callId: string): Promise<void>;
  /** Deletes rounds and mailbox entries that expired at or before `now`. */
  deleteExpired(now: number): Promise<void>;
}
