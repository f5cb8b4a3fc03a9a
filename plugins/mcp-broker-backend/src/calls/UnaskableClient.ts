/*
 * The client half of a call whose 2026-07-28 client cannot be asked anything: the broker has no
 * `requestState` sealing configured, and that revision has no server-to-client requests. A
 * 2025-era backend's request is refused at once (-32601, so its tool goes on or fails instead of
 * waiting for an answer that never comes); a 2026-07-28 backend's `input_required` ends the call
 * with an error naming the backend. `onEnd` runs once when the backend call is over.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { LegacySessionRef } from '../backend/LegacyChannel';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { ClientMessageSink } from './callTypes';
import type { CallClient, InputRound, InputRoundOutcome, ToolCall } from './ToolCall';

/** What an {@link UnaskableClient} is made of. */
export interface UnaskableClientParts {
  /** The stateless caller's pool key (`ModernCaller.poolKey`). */
  owner: string;
  capabilities: RelayedClientCapabilities;
  logger: LoggerService;
  /** Time limit of the broker's short requests to backends (the refusal). */
  requestTimeoutMs: number;
  /** Runs once when the backend call is over. */
  onEnd?: () => void;
}

/** A 2026-07-28 caller's side of a call that cannot take input; see the file comment. */
export class UnaskableClient implements CallClient {
  readonly owner: string;
  readonly capabilities: RelayedClientCapabilities;
  readonly beforeMessage = undefined;

  constructor(private readonly parts: UnaskableClientParts) {
    this.owner = parts.owner;
    this.capabilities = parts.capabilities;
  }

  async open(call: ToolCall, sink: ClientMessageSink, run: () => Promise<void>): Promise<void> {
    call.attach(sink);
    await run();
  }

  watch(): undefined {
    return undefined;
  }

  async ask(_call: ToolCall, session: LegacySessionRef, request: ParsedJsonRpcMessage) {
    const method = String(request.message.method).slice(0, 100);
    try {
      await session.channel.respond(
        session.session,
        request.rawId!,
        {
          error: {
            code: JsonRpcErrorCode.MethodNotFound,
            message:
              `${method} is not available: the client of this call speaks MCP 2026-07-28, to ` +
              'which the broker does not relay server-to-client requests',
          },
        },
        { timeoutMs: this.parts.requestTimeoutMs },
      );
    } catch (error) {
      this.parts.logger.debug(`Could not refuse a backend's ${method}: ${error}`);
    }
  }

  async answerInputs(call: ToolCall, _round: InputRound): Promise<InputRoundOutcome> {
    // The backend's question has nowhere to go.
    return {
      final: {
        jsonrpc: '2.0',
        id: call.request.clientRequestId,
        error: {
          code: JsonRpcErrorCode.InternalError,
          message: `MCP server "${call.backend}" asked for input, which the broker cannot relay to this client`,
          data: { backend: call.backend },
        },
      },
    };
  }

  async failed(): Promise<void> {}

  ended(): void {
    this.parts.onEnd?.();
  }
}
