/*
 * The client half of a call whose client speaks 2026-07-28 and can be asked for input (spec §9):
 * it takes no server-to-client requests on its stream, so what the backend asks ends the
 * client's request with `input_required` and a sealed `requestState`, and the client's retry
 * carries the answers.
 *   - A 2025-era backend's requests are collected into rounds while the backend call stays open
 *     ("held", HeldCalls): the call's sink is the held call's output, which outlives the
 *     client's first request; the retry resumes it, here or through the shared store on another
 *     replica (so a held call also checks, before each message, whether its client moved).
 *   - A 2026-07-28 backend's `input_required` is handed to the client with the backend's own
 *     `requestState` sealed in the broker's: the retry is a new stateless call
 *     (StreamingToolCallHandler), no call is held.
 * `onEnd` runs once when the backend call is over (the caller's backend sessions are released
 * then, not when its first request is answered).
 */
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import { progressTokenOf } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import { inputRequiredResult } from '../protocol/modernResults';
import type { ClientMessageSink, InputRequiredCaller } from './callTypes';
import type { HeldCalls } from './HeldCalls';
import type { CallClient, InputRound, InputRoundOutcome, ToolCall } from './ToolCall';

/** What an {@link InputRequiredClient} is made of. */
export interface InputRequiredClientParts {
  /** The stateless caller's pool key (`ModernCaller.poolKey`). */
  owner: string;
  capabilities: RelayedClientCapabilities;
  /** What the client declared, and what its `requestState` is bound to. */
  caller: InputRequiredCaller;
  held: HeldCalls;
  sealer: RequestStateSealer;
  /** Runs once when the backend call is over. */
  onEnd?: () => void;
}

/** A 2026-07-28 caller's side of a call, input through `input_required`; see the file comment. */
export class InputRequiredClient implements CallClient {
  readonly owner: string;
  readonly capabilities: RelayedClientCapabilities;
  readonly beforeMessage: (call: ToolCall) => Promise<void>;

  constructor(private readonly parts: InputRequiredClientParts) {
    this.owner = parts.owner;
    this.capabilities = parts.capabilities;
    // Held, and the client's retry went to another replica? Then what follows goes there.
    this.beforeMessage = call => parts.held.followClient(call);
  }

  async open(call: ToolCall, sink: ClientMessageSink, run: () => Promise<void>): Promise<void> {
    // The client's request ends with the first `input_required` round or with the call; the
    // backend call itself may go on (held) and is resumed by the client's retry.
    const output = this.parts.held.begin(call, this.parts.caller, {
      sink,
      clientRequestId: call.request.clientRequestId,
      progressToken: progressTokenOf(call.request.params),
    });
    const firstEnded = output.whenLegEnds();
    void run();
    await firstEnded;
  }

  watch(): undefined {
    return undefined;
  }

  ask(call: ToolCall, session: LegacySessionRef, request: ParsedJsonRpcMessage): Promise<void> {
    return this.parts.held.ask(call, session, request);
  }

  async answerInputs(call: ToolCall, round: InputRound): Promise<InputRoundOutcome> {
    // The client answers itself; its retry comes back with the sealed state.
    const sealed = this.parts.sealer.seal(this.parts.caller.binding, {
      backend: call.backend,
      ...(round.requestState === undefined ? {} : { backendRequestState: round.requestState }),
    });
    return {
      final: {
        ...round.response,
        result: inputRequiredResult({
          inputRequests: round.inputRequests as Parameters<
            typeof inputRequiredResult
          >[0]['inputRequests'],
          requestState: sealed,
        }),
      },
    };
  }

  async failed(call: ToolCall): Promise<void> {
    await this.parts.held.adoptRemoteClaim(call);
  }

  ended(call: ToolCall): void {
    this.parts.held.callEnded(call);
    this.parts.onEnd?.();
  }
}
