/*
 * The `input_required` side of tool calls (spec §9): a 2026-07-28 client cannot take
 * server-to-client requests on its stream, so a 2025-era backend's `elicitation/create`,
 * `sampling/createMessage` and `roots/list` during its call are collected into rounds, each
 * answered to the client as `resultType: "input_required"` with a sealed `requestState`, while
 * the backend call stays open ("held") and its stream is still read by its leg (LegacyLeg).
 *
 * Guarantees: the requests a backend sends together (before the event loop turns: one chunk of
 * its stream) form one round; a request the client did not declare the capability for ends the
 * call with -32021 naming the capability (a server must not put it to the client; the backend
 * call is cancelled); a request kind no client can take gets -32601 at the backend; the retry
 * is answered only after its `requestState` opened (bound to principal, tool, arguments, TTL,
 * single use), with the backend's original ids; unanswered requests are asked again in the next
 * round; a call not resumed within the TTL (`elicitationTtl`) is cancelled at the backend
 * (ToolCall.end). With a shared HeldCallStore a retry that lands on a replica without the call
 * resumes it through the store (protocol in HeldCallStore.ts); a retry on the holder never
 * touches it.
 * A retry's client that goes away cancels the backend call wherever the retry landed: on the
 * holder its leg's `clientGone` ends the call; on another replica that replica sends the call a
 * `cancel` signal (replicas/SignalBus.ts), which the holder — waiting for its call's signals from
 * the first published round on — turns into the same end of the call, even while the backend is
 * silent.
 *
 * Failure modes: a refused state throws RequestStateRefusal before anything reaches a backend; a
 * backend that cannot take an answer is logged and its call goes on (or ends with its stream);
 * a store failure while publishing leaves the round resumable on this replica only.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import { backendTimeout, brokerReplicaLost, toClientError } from '../backend/backendErrors';
import type {
  BackendResponder,
  ClientMessageSink,
  InputRequiredCaller,
  InputRetry,
} from './callTypes';
import { isPlainObject, JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage, RawJsonRpcId } from '../protocol/jsonRpcMessage';
import type { ToolCall } from './ToolCall';
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
import { callAddress, type SignalBus } from '../replicas/SignalBus';
import { relayRound, relaySink, ROUND_RELAY_POLL_MS } from './roundRelay';
import {
  OpenedRequestState,
  RequestStateRefusal,
  RequestStateSealer,
} from '../inputRequests/RequestStateSealer';

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
  /** Stops waiting for the call's signals (set from its first published round on). */
  unwatch?: () => void;
  /** Aborted when the client of another replica's retry went away (its relay's `clientGone`). */
  remoteGone?: AbortController;
}

/** Options of {@link HeldCalls}. */
export interface HeldCallsOptions {
  logger: LoggerService;
  /** Answers the backend's requests with their own ids; finds backends by name. */
  responder: BackendResponder;
  /** True while the backend call runs (ToolCalls knows). */
  isRunning(call: ToolCall): boolean;
  /** Seals and opens `requestState`; its TTL is also how long a call is held. */
  sealer: RequestStateSealer;
  /**
   * Shared held calls and the bus between replicas (several replicas); without them retries
   * resume only on this replica.
   */
  shared?: { store: HeldCallStore; bus: SignalBus };
  toolCallTimeoutMs: number;
}

/** The held calls of one replica; see the file comment. */
export class HeldCalls {
  /** Held-capable calls by call id, until their final response was delivered (or never will be). */
  private readonly calls = new Map<string, { call: ToolCall; held: HeldCallState }>();

  constructor(private readonly options: HeldCallsOptions) {}

  /**
   * Makes `call` a held-capable call: its sink becomes the output whose first client request
   * writes to `first.sink`.
   */
  begin(
    call: ToolCall,
    caller: InputRequiredCaller,
    first: ConstructorParameters<typeof HeldCallOutput>[0],
  ): HeldCallOutput {
    const output = new HeldCallOutput(first);
    const held: HeldCallState = { caller, output, pending: [], asked: [], nextKey: 1, round: 0 };
    this.calls.set(call.id, { call, held });
    call.attach(output);
    return output;
  }

  /** True while the call waits for its client's retry. */
  isHolding(call: ToolCall): boolean {
    return this.stateOf(call)?.holdTimer !== undefined;
  }

  /**
   * Before the held call's stream yields the next message: when no client request is attached
   * and another replica claimed the round, what follows goes to that replica.
   */
  async followClient(call: ToolCall): Promise<void> {
    const held = this.stateOf(call);
    if (held !== undefined && !held.output.attached) await this.adoptRemoteClaim(call);
  }

  private stateOf(call: ToolCall): HeldCallState | undefined {
    return this.calls.get(call.id)?.held;
  }

  /**
   * The backend call ended: forget it, unless its final response waits for the client's retry
   * (then the hold timer forgets it at the TTL).
   */
  callEnded(call: ToolCall): void {
    const held = this.stateOf(call);
    if (held === undefined) return;
    held.unwatch?.(); // nothing left to cancel
    held.unwatch = undefined;
    if (held.holdTimer !== undefined && call.endReason !== 'input-expired') return;
    this.forgetHeldCall(call, held);
  }

  private forgetHeldCall(call: ToolCall, held: HeldCallState): void {
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    if (held.roundEnd !== undefined) clearImmediate(held.roundEnd);
    held.roundEnd = undefined;
    this.calls.delete(call.id);
  }

  async ask(
    call: ToolCall,
    session: LegacySessionRef,
    parsed: ParsedJsonRpcMessage,
  ): Promise<void> {
    const held = this.stateOf(call)!;
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
      await this.options.responder.respond(session, parsed.rawId!, {
        error: { code: JsonRpcErrorCode.MethodNotFound, message: `Not available: ${reason}` },
      });
      return;
    }
    if (missing !== undefined) {
      // The tool needs what this client cannot give (spec §9: -32021): the call ends, cancelled
      // at the backend, and the client learns which capability to declare.
      const refusal = missingCapabilityError(
        missing,
        `MCP server "${call.backend}" asked for ${method} during the call`,
      );
      call.end('missing-capability', undefined, {
        code: refusal.code,
        message: refusal.message,
        data: refusal.data,
      });
      return;
    }
    held.pending.push({ key: inputKey(method, held.nextKey++), rawId: parsed.rawId!, request });
    this.scheduleRoundEnd(call);
  }

  /**
   * Ends the round once the event loop turns: requests the backend sent together (one chunk of
   * its stream) go to the client in one `input_required` result.
   */
  private scheduleRoundEnd(call: ToolCall): void {
    const held = this.stateOf(call)!;
    if (held.roundEnd !== undefined || held.ending || !held.output.attached) return;
    held.roundEnd = setImmediate(() => {
      held.roundEnd = undefined;
      void this.endRound(call);
    });
  }

  private async endRound(call: ToolCall): Promise<void> {
    const held = this.stateOf(call)!;
    if (!held.output.attached || held.pending.length === 0 || call.endReason !== undefined) {
      return;
    }
    const sealer = this.options.sealer;
    held.ending = true;
    held.asked = held.pending.splice(0);
    held.round += 1;
    const requestState = sealer.seal(held.caller.binding, {
      callId: call.id,
      backend: call.backend,
    });
    call.stopTimer(); // the client, not the backend, is the one we wait for now
    // Published before the client sees the round: its retry may land on any replica.
    await this.publishRound(call, sealer.ttlMs);
    held.ending = undefined;
    held.holdTimer = setTimeout(() => void this.holdExpired(call, held), sealer.ttlMs);
    held.holdTimer.unref();
    held.output.hold(
      inputRequiredResult({
        inputRequests: Object.fromEntries(held.asked.map(input => [input.key, input.request])),
        requestState,
      }),
    );
  }

  private async publishRound(call: ToolCall, ttlMs: number): Promise<void> {
    const shared = this.options.shared;
    const held = this.stateOf(call)!;
    if (shared === undefined || call.session === undefined) return;
    try {
      await shared.store.publishRound({
        callId: call.id,
        round: held.round,
        backend: call.backend,
        backendSessionId: call.session.session.id,
        protocolVersion: call.session.session.protocolVersion,
        asked: held.asked.map(input => ({ key: input.key, rawId: input.rawId })),
        expiresAt: Date.now() + ttlMs,
      });
    } catch (error) {
      // A retry on this replica still resumes the call; on another it is refused (call-ended).
      this.options.logger.warn(`Could not publish a held call for other replicas: ${error}`);
      return;
    }
    // A retry elsewhere may be cancelled from now on: its replica tells the call.
    held.unwatch ??= shared.bus.watch(
      callAddress(call.id),
      signal => {
        if (signal.kind !== 'cancel') return false;
        void this.cancelledElsewhere(call, held);
        return true;
      },
      ROUND_RELAY_POLL_MS,
    );
  }

  /**
   * The client of the retry served on another replica went away: the call ends as for a client
   * of this replica (cancelled at the backend), and its rows go.
   */
  private async cancelledElsewhere(call: ToolCall, held: HeldCallState): Promise<void> {
    // A round claimed but not yet taken over (the backend silent since the answer): take it
    // over now, so that the cancellation ends the call through the claiming replica's request.
    if (held.holdTimer !== undefined) await this.adoptRemoteClaim(call);
    if (held.remoteGone !== undefined) held.remoteGone.abort();
    else call.end('client-gone');
    await this.options.shared?.store
      .deleteCall(call.id)
      .catch(error => this.options.logger.warn(`Could not delete a held call's rows: ${error}`));
  }

  /** The client did not come back in time: unless another replica took the round, cancel. */
  private async holdExpired(call: ToolCall, held: HeldCallState): Promise<void> {
    if (await this.adoptRemoteClaim(call)) return;
    held.holdTimer = undefined;
    if (call.endReason === undefined && this.options.isRunning(call)) {
      call.end('input-expired');
    } else {
      this.forgetHeldCall(call, held);
    }
  }

  /**
   * A held call whose round another replica claimed: from now on what the call yields goes to
   * the replica that claimed it (see HeldCallStore.ts). True when a claim was adopted.
   */
  async adoptRemoteClaim(call: ToolCall): Promise<boolean> {
    const shared = this.options.shared;
    const held = this.stateOf(call);
    if (shared === undefined || held === undefined || held.holdTimer === undefined) return false;
    const round = held.round;
    let claim;
    try {
      claim = await shared.store.claimOf(call.id, round);
    } catch (error) {
      this.options.logger.warn(`Could not look up a held call's claim: ${error}`);
      return false;
    }
    if (claim === undefined || held.holdTimer === undefined || held.round !== round) return false;
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    const asked = held.asked.splice(0);
    held.pending.unshift(...asked.filter(input => !claim.answered.includes(input.key)));
    held.remoteGone = new AbortController();
    void held.output.resume({
      sink: relaySink({
        bus: shared.bus,
        callId: call.id,
        round,
        ttlMs: this.options.toolCallTimeoutMs + this.options.sealer.ttlMs,
        gone: held.remoteGone.signal,
        onError: error =>
          this.options.logger.warn(`Could not relay a held call to another replica: ${error}`),
      }),
      clientRequestId: claim.clientRequestId,
      progressToken: claim.progressToken,
    });
    this.continueAfterResume(call, held);
    return true;
  }

  /** After a leg attached: the call timer runs again and waiting requests form the next round. */
  private continueAfterResume(call: ToolCall, held: HeldCallState): void {
    if (held.output.finished) {
      this.forgetHeldCall(call, held);
      return;
    }
    call.startTimer();
    if (held.pending.length > 0) this.scheduleRoundEnd(call);
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
    retry: InputRetry,
    sink: ClientMessageSink,
  ): Promise<OpenedRequestState | undefined> {
    const sealer = this.options.sealer;
    const opened = await sealer.open(retry.requestState, retry.binding);
    if (opened.callId === undefined && opened.backend !== undefined) return opened;
    const entry = opened.callId === undefined ? undefined : this.calls.get(opened.callId);
    if (entry === undefined) {
      if (opened.callId !== undefined && this.options.shared !== undefined) {
        await this.resumeElsewhereHeld(opened.callId, retry, sink);
        return undefined;
      }
      throw new RequestStateRefusal('call-ended');
    }
    const { call, held } = entry;
    if (held.holdTimer === undefined) throw new RequestStateRefusal('call-ended');
    clearTimeout(held.holdTimer);
    held.holdTimer = undefined;
    const asked = held.asked.splice(0);
    // Unanswered requests are asked again (MCP: missing answers get another input_required).
    held.pending.unshift(...asked.filter(input => retry.inputResponses[input.key] === undefined));
    const session = call.session;
    if (session !== undefined) {
      await Promise.all(
        asked
          .filter(input => retry.inputResponses[input.key] !== undefined)
          .map(input =>
            this.options.responder.respond(session, input.rawId, {
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
    this.continueAfterResume(call, held);
    await ended;
    return undefined;
  }

  /**
   * A retry of a call another replica holds: claims the round, answers the backend session with
   * the original ids, and writes what the holder relays until the leg ends (see HeldCallStore.ts).
   */
  private async resumeElsewhereHeld(
    callId: string,
    retry: InputRetry,
    sink: ClientMessageSink,
  ): Promise<void> {
    const { store, bus } = this.options.shared!;
    const now = Date.now();
    const deadline = now + this.options.toolCallTimeoutMs;
    const claim = {
      clientRequestId: retry.clientRequestId,
      ...(retry.progressToken === undefined ? {} : { progressToken: retry.progressToken }),
      answered: Object.keys(retry.inputResponses),
    };
    const round = await store.claimRound(callId, claim, now, deadline + this.options.sealer.ttlMs);
    if (round === 'holder-gone') throw new RequestStateRefusal('holder-gone');
    const channels = round && this.options.responder.backendOf(round.backend);
    if (round === undefined || channels === undefined) throw new RequestStateRefusal('call-ended');
    const session = {
      channel: channels.legacy,
      session: { id: round.backendSessionId, protocolVersion: round.protocolVersion },
    };
    await Promise.all(
      round.asked
        .filter(input => retry.inputResponses[input.key] !== undefined)
        .map(input =>
          this.options.responder.respond(session, input.rawId, {
            result: retry.inputResponses[input.key],
          }),
        ),
    );
    await relayRound({
      bus,
      callId,
      round: round.round,
      sink,
      deadline,
      ttlMs: this.options.sealer.ttlMs,
      timedOut: () => ({
        jsonrpc: '2.0',
        id: retry.clientRequestId,
        error: toClientError(backendTimeout(round.backend, this.options.toolCallTimeoutMs)),
      }),
      holderGone: () => store.holderGone(callId, Date.now()),
      holderLost: () => ({
        jsonrpc: '2.0',
        id: retry.clientRequestId,
        error: toClientError(brokerReplicaLost(round.backend)),
      }),
      onError: error =>
        this.options.logger.warn(`Could not pass a held call's cancellation on: ${error}`),
    });
  }
}

/** An input key: the kind of request and a number unique within the call. */
function inputKey(method: string, n: number): string {
  return `${method.split('/')[0]}-${n}`;
}
