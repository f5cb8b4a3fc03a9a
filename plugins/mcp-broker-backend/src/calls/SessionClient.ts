/*
 * The client half of a call whose client is a 2025-11-25 session (spec §4): whatever the backend
 * asks reaches the client on the call's own stream under a gateway id (AnswerRouter), the
 * question of a 2025-era backend as it was asked, each input of a 2026-07-28 backend's
 * `input_required` as a real request (answers then retry the backend). The session's
 * `notifications/cancelled` and DELETE may land on another replica: with a shared store the call
 * listens for them on the bus while it runs (SessionCancellations).
 */
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { AnswerRouter } from './AnswerRouter';
import type { ClientMessageSink } from './callTypes';
import type { SessionCancellations } from './SessionCancellations';
import type { CallClient, InputRound, InputRoundOutcome, ToolCall } from './ToolCall';

/** A 2025-11-25 session's side of a call; see the file comment. */
export class SessionClient implements CallClient {
  readonly beforeMessage = undefined;

  constructor(
    /** The client session's id. */
    readonly owner: string,
    readonly capabilities: RelayedClientCapabilities,
    private readonly router: AnswerRouter,
    /** The bus between replicas (several replicas); absent: the session lives here only. */
    private readonly cancellations: SessionCancellations | undefined,
  ) {}

  open(call: ToolCall, sink: ClientMessageSink, run: () => Promise<void>): Promise<void> {
    call.attach(sink);
    return run();
  }

  watch(call: ToolCall): (() => void) | undefined {
    return this.cancellations?.watch(call, call.requestKey);
  }

  ask(call: ToolCall, session: LegacySessionRef, request: ParsedJsonRpcMessage): Promise<void> {
    return this.router.relayRequest(call, session, request.rawId!, request.message);
  }

  async answerInputs(call: ToolCall, round: InputRound): Promise<InputRoundOutcome> {
    const inputResponses = await this.router.askInputs(
      call,
      round.number,
      round.inputRequests ?? {},
    );
    return { inputResponses };
  }

  async failed(): Promise<void> {}

  ended(): void {}
}
