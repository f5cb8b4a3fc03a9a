/*
 * The `input_required` side of tool calls (spec §9): a 2026-07-28 client cannot take
 * server-to-client requests on its stream, so a 2025-era backend's `elicitation/create`,
 * `sampling/createMessage` and `roots/list` during its call are collected into rounds, each
 * answered to the client as `resultType: "input_required"` with a sealed `requestState`, while
 * the backend call stays open ("held") and its stream is still read by the ToolCallForwarder.
 *
 * Guarantees: the requests a backend sends together (before the event loop turns: one chunk of
 * its stream) form one round; a request the client did not declare the capability for ends the
 * call with -32021 naming the capability (a server must not put it to the client; the backend
 * call is cancelled); a request kind no client can take gets -32601 at the backend; the retry
 * is answered only after its `requestState` opened (bound to principal, tool, arguments, TTL,
 * single use), with the backend's original ids; unanswered requests are asked again in the next
 * round; a call not resumed within the TTL (`elicitationTtl`) is cancelled at the backend through
 * the host. With a shared HeldCallStore a retry that lands on a replica without the call resumes
 * it through the store (protocol in HeldCallStore.ts); a retry on the holder never touches it.
 * A retry's client that goes away cancels the backend call wherever the retry landed: on the
 * holder its leg's `clientGone` ends the call; on another replica that replica marks its claim
 * cancelled, and the holder's mailbox leg aborts its `clientGone` when it reads the mark, which
 * ends the call the same way.
 *
 * Failure modes: a refused state throws RequestStateRefusal before anything reaches a backend; a
 * backend that cannot take an answer is logged and its call goes on (or ends with its stream);
 * a store failure while publishing leaves the round resumable on this replica only.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { BackendChannels } from './backendChannels';
import type { LegacySessionRef } from './LegacyChannel';
import { backendTimeout, toClientError } from './backendErrors';
import type { ClientMessageSink, InputRequiredCaller, InputRetryLeg } from './ToolCallForwarder';
import { isPlainObject, JsonRpcErrorCode, JsonRpcErrorObject } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage, RawJsonRpcId } from '../protocol/jsonRpcMessage';
import {
  InputRequest,
  inputRequestFromServerRequest,
  inputRequiredResult,
} from '../protocol/modernResults';
import {
  missingCapabilityError,
  missingClientCapabilities,
  requiredCapabilitiesForInputRequest,
} from '../protocol/requestMetadata';
import { HeldCallOutput } from './HeldCallOutput';
import type { HeldCallStore } from '../inputRequests/HeldCallStore';
import { mailboxSink, relayMailbox } from './heldCallMailbox';
import {
  OpenedRequestState,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';

/** Default interval of mailbox reads for the replica that waits for another one's messages. */
export const DEFAULT_MAILBOX_POLL_MS = 100;

/** A backend request waiting for a 2026-07-28 client's input. */
interface PendingInput {
  key: string;
  /** The backend's id, as written. */
  rawId: RawJsonRpcId;
  request: InputRequest;
}

/** The `input_required` state of one call. */
export interface HeldCallState {
  caller: InputRequiredCaller;
  output: HeldCallOutput;
  /** Asked by the backend, not yet put to the client. */
  pending: PendingInput[];
  /** Put to the client in the last round, waiting for its retry. */
  asked: PendingInput[];
  nextKey: number;
  /** The number of the last round put to the client (0 before the first). */
  round: number;
  roundEnd?: NodeJS.Immediate;
  /** Set while a round is being published (more requests wait for the next round). */
  ending?: true;
  /** Set while the call waits for the client's retry; cancels the call at the TTL. */
  holdTimer?: NodeJS.Timeout;
}

/** What HeldCalls needs of a call (the forwarder's call record). */
export interface HeldCallEntry {
  readonly callId: string;
  readonly backend: string;
  readonly sent?: { session: LegacySessionRef };
  readonly endReason?: string;
  held?: HeldCallState;
}

/** What HeldCalls needs of the forwarder that runs the calls. */
export interface HeldCallHost {
  /** (Re)starts the call's `toolCallTimeout` (it runs while a client waits). */
  startCallTimer(call: HeldCallEntry): void;
  stopCallTimer(call: HeldCallEntry): void;
  /** True while the backend call runs. */
  isInFlight(call: HeldCallEntry): boolean;
  /**
   * Ends the call: cancelled at the backend, then its stream closed. With `clientError` the
   * client's request is answered with it (else, for an expired hold, nobody is waiting).
   */
  endCall(
    call: HeldCallEntry,
    reason: 'input-expired' | 'missing-capability',
    clientError?: JsonRpcErrorObject,
  ): void;
  /** Answers a backend's request with its own id (failures are logged, never thrown). */
  respond(
    session: LegacySessionRef,
    rawId: RawJsonRpcId,
    answer: { result?: unknown; error?: unknown },
  ): Promise<void>;
  /** The live backend by name (a retry elsewhere answers its backend session directly). */
  backendOf(backend: string): BackendChannels | undefined;
}

/** Options of {@link HeldCalls}. */
export interface HeldCallsOptions {
  logger: LoggerService;
  /** Seals and opens `requestState`; its TTL is also how long a call is held. */
  sealer: RequestStateSealer;
  /** Shared held calls (several replicas); without it retries resume only on this replica. */
  store?: HeldCallStore;
  toolCallTimeoutMs: number;
  /** Mailbox read interval for a retry of a call held elsewhere; default 100 ms. */
  mailboxPollMs?: number;
}

/** The held calls of one forwarder; see the file comment. */
export class HeldCalls {
  /** Calls by call id, until their final response was delivered (or never will be). */
  private readonly calls = new Map<string, HeldCallEntry>();

  constructor(
    private readonly options: HeldCallsOptions,
    private readonly host: HeldCallHost,
  ) {}

  /** Makes `entry` a held-capable call whose first leg writes to `sink`. */
  begin(
    entry: HeldCallEntry,
    caller: InputRequiredCaller,
    first: ConstructorParameters<typeof HeldCallOutput>[0],
  ): HeldCallOutput {
    const output = new HeldCallOutput(first);
    entry.held = { caller, output, pending: [], asked: [], nextKey: 1, round: 0 };
    this.calls.set(entry.callId, entry);
    return output;
  }

  /** True while the call waits for its client's retry. */
  isHolding(entry: HeldCallEntry): boolean {
    return entry.held?.holdTimer !== undefined;
  }

  /**
   * The backend call ended: forget it, unless its final response waits for the client's retry
   * (then the hold timer forgets it at the TTL).
   */
  callEnded(entry: HeldCallEntry): void {
    const held = entry.held;
    if (held === undefined) return;
    if (held.holdTimer !== undefined && entry.endReason !== 'input-expired') return;
    this.forgetHeldCall(entry);
  }

  private forgetHeldCall(entry: HeldCallEntry): void {
    const held = entry.held!;
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    if (held.roundEnd !== undefined) clearImmediate(held.roundEnd);
    held.roundEnd = undefined;
    this.calls.delete(entry.callId);
  }

  async ask(
    entry: HeldCallEntry,
    session: LegacySessionRef,
    parsed: ParsedJsonRpcMessage,
  ): Promise<void> {
    const held = entry.held!;
    const method = String(parsed.message.method);
    const params = isPlainObject(parsed.message.params) ? parsed.message.params : undefined;
    const request = inputRequestFromServerRequest(method, params);
    const required = request && requiredCapabilitiesForInputRequest(method, params);
    const missing =
      required === undefined
        ? undefined
        : missingClientCapabilities(required, held.caller.declaredCapabilities);
    if (request === undefined) {
      const reason = `the broker cannot put "${method}" to a 2026-07-28 client`;
      await this.host.respond(session, parsed.rawId!, {
        error: { code: JsonRpcErrorCode.MethodNotFound, message: `Not available: ${reason}` },
      });
      return;
    }
    if (missing !== undefined) {
      // The tool needs what this client cannot give (spec §9: -32021): the call ends, cancelled
      // at the backend, and the client learns which capability to declare.
      const refusal = missingCapabilityError(
        missing,
        `MCP server "${entry.backend}" asked for ${method} during the call`,
      );
      this.host.endCall(entry, 'missing-capability', {
        code: refusal.code,
        message: refusal.message,
        data: refusal.data,
      });
      return;
    }
    held.pending.push({ key: inputKey(method, held.nextKey++), rawId: parsed.rawId!, request });
    this.scheduleRoundEnd(entry);
  }

  /**
   * Ends the round once the event loop turns: requests the backend sent together (one chunk of
   * its stream) go to the client in one `input_required` result.
   */
  private scheduleRoundEnd(entry: HeldCallEntry): void {
    const held = entry.held!;
    if (held.roundEnd !== undefined || held.ending || !held.output.attached) return;
    held.roundEnd = setImmediate(() => {
      held.roundEnd = undefined;
      void this.endRound(entry);
    });
  }

  private async endRound(entry: HeldCallEntry): Promise<void> {
    const held = entry.held!;
    if (!held.output.attached || held.pending.length === 0 || entry.endReason !== undefined) {
      return;
    }
    const sealer = this.options.sealer;
    held.ending = true;
    held.asked = held.pending.splice(0);
    held.round += 1;
    const requestState = sealer.seal(held.caller.binding, {
      callId: entry.callId,
      backend: entry.backend,
    });
    this.host.stopCallTimer(entry); // the client, not the backend, is the one we wait for now
    // Published before the client sees the round: its retry may land on any replica.
    await this.publishRound(entry, sealer.ttlMs);
    held.ending = undefined;
    held.holdTimer = setTimeout(() => void this.holdExpired(entry), sealer.ttlMs);
    held.holdTimer.unref();
    held.output.hold(
      inputRequiredResult({
        inputRequests: Object.fromEntries(held.asked.map(input => [input.key, input.request])),
        requestState,
      }),
    );
  }

  private async publishRound(entry: HeldCallEntry, ttlMs: number): Promise<void> {
    const store = this.options.store;
    const held = entry.held!;
    if (store === undefined || entry.sent === undefined) return;
    try {
      await store.publishRound({
        callId: entry.callId,
        round: held.round,
        backend: entry.backend,
        backendSessionId: entry.sent.session.session.id,
        protocolVersion: entry.sent.session.session.protocolVersion,
        asked: held.asked.map(input => ({ key: input.key, rawId: input.rawId })),
        expiresAt: Date.now() + ttlMs,
      });
    } catch (error) {
      // A retry on this replica still resumes the call; on another it is refused (call-ended).
      this.options.logger.warn(`Could not publish a held call for other replicas: ${error}`);
    }
  }

  /** The client did not come back in time: unless another replica took the round, cancel. */
  private async holdExpired(entry: HeldCallEntry): Promise<void> {
    if (await this.adoptRemoteClaim(entry)) return;
    const held = entry.held!;
    held.holdTimer = undefined;
    if (entry.endReason === undefined && this.host.isInFlight(entry)) {
      this.host.endCall(entry, 'input-expired');
    } else {
      this.forgetHeldCall(entry);
    }
  }

  /**
   * A held call whose round another replica claimed: from now on what the call yields goes to
   * the mailbox for that replica (see HeldCallStore.ts). True when a claim was adopted.
   */
  async adoptRemoteClaim(entry: HeldCallEntry): Promise<boolean> {
    const store = this.options.store;
    const held = entry.held;
    if (store === undefined || held === undefined || held.holdTimer === undefined) return false;
    const round = held.round;
    let claim;
    try {
      claim = await store.claimOf(entry.callId, round);
    } catch (error) {
      this.options.logger.warn(`Could not look up a held call's claim: ${error}`);
      return false;
    }
    if (claim === undefined || held.holdTimer === undefined || held.round !== round) return false;
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    const asked = held.asked.splice(0);
    held.pending.unshift(...asked.filter(input => !claim.answered.includes(input.key)));
    const expiresAt = Date.now() + this.options.toolCallTimeoutMs + this.options.sealer.ttlMs;
    void held.output.resume({
      sink: mailboxSink({
        store,
        callId: entry.callId,
        round,
        expiresAt,
        pollMs: this.mailboxPollMs,
        cancelled: claim.cancelled,
        onError: error =>
          this.options.logger.warn(`Could not use a held call's mailbox or claim: ${error}`),
      }),
      clientRequestId: claim.clientRequestId,
      progressToken: claim.progressToken,
    });
    this.continueAfterResume(entry);
    return true;
  }

  /** After a leg attached: the call timer runs again and waiting requests form the next round. */
  private continueAfterResume(entry: HeldCallEntry): void {
    const held = entry.held!;
    if (held.output.finished) {
      this.forgetHeldCall(entry);
      return;
    }
    this.host.startCallTimer(entry);
    if (held.pending.length > 0) this.scheduleRoundEnd(entry);
  }

  /**
   * Resumes a held call with a 2026-07-28 client's retry: opens the `requestState` (a refusal
   * throws {@link RequestStateRefusal} before anything reaches a backend), answers the backend's
   * requests with their original ids, and writes the rest of the call — or the next
   * `input_required` round — to `sink`. Resolves when this leg ends; resolves with the opened
   * state, writing nothing, when it holds no call but a 2026-07-28 backend's round (the caller
   * retries that backend statelessly).
   */
  async resume(
    retry: InputRetryLeg,
    sink: ClientMessageSink,
  ): Promise<OpenedRequestState | undefined> {
    const sealer = this.options.sealer;
    const opened = await sealer.open(retry.requestState, retry.binding);
    if (opened.callId === undefined && opened.backend !== undefined) return opened;
    const entry = opened.callId === undefined ? undefined : this.calls.get(opened.callId);
    const held = entry?.held;
    if (entry === undefined || held === undefined) {
      if (opened.callId !== undefined && this.options.store !== undefined) {
        await this.resumeElsewhereHeld(opened.callId, retry, sink);
        return undefined;
      }
      throw new RequestStateRefusal('call-ended');
    }
    if (held.holdTimer === undefined) throw new RequestStateRefusal('call-ended');
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    const asked = held.asked.splice(0);
    // Unanswered requests are asked again (MCP: missing answers get another input_required).
    held.pending.unshift(...asked.filter(input => retry.inputResponses[input.key] === undefined));
    const session = entry.sent?.session;
    if (session !== undefined) {
      await Promise.all(
        asked
          .filter(input => retry.inputResponses[input.key] !== undefined)
          .map(input =>
            this.host.respond(session, input.rawId, {
              result: retry.inputResponses[input.key],
            }),
          ),
      );
    }
    const ended = held.output.resume({
      sink,
      clientRequestId: retry.clientRequestId,
      progressToken: retry.progressToken,
    });
    this.continueAfterResume(entry);
    await ended;
    return undefined;
  }

  /**
   * A retry of a call another replica holds: claims the round, answers the backend session with
   * the original ids, and relays the holder's mailbox until the leg ends (see HeldCallStore.ts).
   */
  private async resumeElsewhereHeld(
    callId: string,
    retry: InputRetryLeg,
    sink: ClientMessageSink,
  ): Promise<void> {
    const store = this.options.store!;
    const now = Date.now();
    const deadline = now + this.options.toolCallTimeoutMs;
    const claim = {
      clientRequestId: retry.clientRequestId,
      ...(retry.progressToken === undefined ? {} : { progressToken: retry.progressToken }),
      answered: Object.keys(retry.inputResponses),
    };
    const round = await store.claimRound(callId, claim, now, deadline + this.options.sealer.ttlMs);
    const channels = round && this.host.backendOf(round.backend);
    if (round === undefined || channels === undefined) throw new RequestStateRefusal('call-ended');
    const session = {
      channel: channels.legacy,
      session: { id: round.backendSessionId, protocolVersion: round.protocolVersion },
    };
    await Promise.all(
      round.asked
        .filter(input => retry.inputResponses[input.key] !== undefined)
        .map(input =>
          this.host.respond(session, input.rawId, {
            result: retry.inputResponses[input.key],
          }),
        ),
    );
    const end = await relayMailbox({
      store,
      callId,
      round: round.round,
      sink,
      deadline,
      pollMs: this.mailboxPollMs,
      timedOut: () => ({
        jsonrpc: '2.0',
        id: retry.clientRequestId,
        error: toClientError(backendTimeout(round.backend, this.options.toolCallTimeoutMs)),
      }),
    });
    if (end !== 'aborted') return;
    // The client went away (for a 2026-07-28 client, the cancellation): the holder cancels.
    await store
      .cancelClaim(callId, round.round, claim)
      .catch(error =>
        this.options.logger.warn(`Could not pass a held call's cancellation on: ${error}`),
      );
  }

  private get mailboxPollMs(): number {
    return this.options.mailboxPollMs ?? DEFAULT_MAILBOX_POLL_MS;
  }
}

/** An input key: the kind of request and a number unique within the call. */
function inputKey(method: string, n: number): string {
  return `${method.split('/')[0]}-${n}`;
}
