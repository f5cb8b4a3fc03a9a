/* A test double of ClientEventStream that records what a client would receive, in memory. */
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import type { ClientEventStream } from '../types';

/** A ClientEventStream that records its messages; `close()` aborts its signal like a real one. */
export function recordingStream(): ClientEventStream & { messages: JsonRpcMessage[] } {
  const controller = new AbortController();
  const messages: JsonRpcMessage[] = [];
  return {
    messages,
    send: message => {
      if (controller.signal.aborted) return false;
      messages.push(message);
      return true;
    },
    close: () => controller.abort(),
    get closed() {
      return controller.signal.aborted;
    },
    signal: controller.signal,
  };
}
