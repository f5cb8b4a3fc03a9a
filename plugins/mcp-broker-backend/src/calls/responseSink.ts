/*
 * The client's side of a call as the call machinery writes to it: a ClientMessageSink over the
 * router's ClientResponseWriter (the answer to the client's POST). Each message may be reshaped
 * for the client's era first (or dropped); the final response goes with the HTTP status the
 * caller gives it, should the writer answer it as plain JSON.
 */
import { type JsonRpcMessage } from '../protocol/jsonRpc';
import type { ToolCallContext } from '../types';
import type { ClientMessageSink } from './callTypes';

/**
 * The sink of a call answered through `context.response`: each message shaped by `shape`
 * (undefined drops it); the final response goes with the HTTP status `httpStatusOf` gives it.
 */
export function responseSink(
  context: Pick<ToolCallContext, 'response' | 'signal'>,
  shape: (message: Record<string, unknown>) => Record<string, unknown> | undefined = message =>
    message,
  httpStatusOf: (response: Record<string, unknown>) => number = () => 200,
): ClientMessageSink {
  const { response } = context;
  return {
    send: message => {
      const shaped = shape(message) as unknown as JsonRpcMessage | undefined;
      if (shaped === undefined) return true;
      return isFinalResponse(shaped)
        ? response.finish(shaped, httpStatusOf(shaped as unknown as Record<string, unknown>))
        : response.send(shaped);
    },
    end: () => response.end(),
    clientGone: context.signal,
  };
}

/** A JSON-RPC response (not a request with a gateway id, not a notification). */
function isFinalResponse(message: JsonRpcMessage): boolean {
  return 'id' in message && !('method' in message);
}
