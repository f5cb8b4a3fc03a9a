/*
 * A client stream whose messages someone watches on their way out: the audit trail (how a tool
 * call ended) and the request's telemetry read the final response this way.
 */
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import type { ClientEventStream } from '../types';

/** `stream`, calling `see` with every message before it is sent. */
export function observedStream(
  stream: ClientEventStream,
  see: (message: JsonRpcMessage) => void,
): ClientEventStream {
  return {
    send(message) {
      see(message);
      return stream.send(message);
    },
    close: () => stream.close(),
    get closed() {
      return stream.closed;
    },
    get signal() {
      return stream.signal;
    },
  };
}
