/*
 * Reading a call's reply from its backend, the part both legs share: notifications (progress,
 * log messages) pass to the client unchanged, the response to the call's own request is its
 * final answer (re-addressed to the client's id), anything unusable is dropped with a warning,
 * and a backend's own requests go to the leg (each era has its own rule for them). A stream that
 * ends without the answer is `backendStreamEnded`. What is dropped is counted in the backend's
 * misbehaviours (`/status`): a message that is not JSON-RPC, a response with another id.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { backendStreamEnded } from '../backend/backendErrors';
import type { BackendReply } from '../backend/backendTransport';
import { isPlainObject } from '../protocol/jsonRpc';
import { classifyJsonRpcMessage, type ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { ToolCall } from './ToolCall';

/** How one leg reads its reply (see {@link readCallReply}). */
export interface CallReplyReading {
  /** The id the broker gave the request at the backend. */
  readonly backendRequestId: number;
  readonly logger: LoggerService;
  /** A request the backend sent on the call's stream. */
  onRequest(parsed: ParsedJsonRpcMessage): Promise<void>;
  /** Runs before each message is handled (a held call checks whether its client moved). */
  beforeMessage?(): Promise<void>;
  /**
   * A 2026-07-28 backend answers a request it refuses with one JSON-RPC error, with or without
   * the request's id: with this set, such a lone error is the call's answer.
   */
  loneErrors?: boolean;
}

/** Reads `reply` until the call's answer; see the file comment. */
export async function readCallReply(
  call: ToolCall,
  reply: BackendReply,
  reading: CallReplyReading,
): Promise<Record<string, unknown>> {
  const backend = call.backend;
  const { misbehaviours } = call.request.backend;
  for await (const item of reply) {
    if (item.type === 'malformed') {
      misbehaviours.record('malformedMessages');
      reading.logger.warn(`MCP server "${backend}" sent a message that is not JSON-RPC; dropped`);
      continue;
    }
    const parsed = item.parsed;
    if (reading.loneErrors && reply.single && isLoneError(parsed.message)) {
      return { jsonrpc: '2.0', id: call.request.clientRequestId, error: parsed.message.error };
    }
    await reading.beforeMessage?.();
    switch (classifyJsonRpcMessage(parsed)) {
      case 'notification':
        call.sink.send(parsed.message);
        break;
      case 'request':
        await reading.onRequest(parsed);
        break;
      case 'response':
        if (parsed.message.id === reading.backendRequestId) {
          return answerOf(call, parsed.message);
        }
        misbehaviours.record('mismatchedIds');
        reading.logger.warn(
          `MCP server "${backend}" sent a response to a request the broker did not make; dropped`,
        );
        break;
      default:
        misbehaviours.record('malformedMessages');
        reading.logger.warn(`MCP server "${backend}" sent an invalid JSON-RPC message; dropped`);
    }
  }
  throw backendStreamEnded(backend);
}

/** The backend's response as the client's: its result or error under the client's id. */
export function answerOf(
  call: ToolCall,
  response: Record<string, unknown>,
): Record<string, unknown> {
  const { result, error } = response;
  return error !== undefined
    ? { jsonrpc: '2.0', id: call.request.clientRequestId, error }
    : { jsonrpc: '2.0', id: call.request.clientRequestId, result };
}

/** A JSON-RPC error response, of any id. */
function isLoneError(message: Record<string, unknown>): boolean {
  const error = message.error;
  return (
    message.method === undefined &&
    isPlainObject(error) &&
    typeof error.code === 'number' &&
    typeof error.message === 'string'
  );
}
