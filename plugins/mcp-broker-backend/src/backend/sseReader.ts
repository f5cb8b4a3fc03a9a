/*
 * Reads a server-sent-events body (the bytes of a backend response, see
 * `BackendResponse.body`) and hands each event to a callback. Comments (keep-alives) are
 * reported separately so callers can treat them as liveness signals without parsing them as
 * messages.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, EventSourceMessage } from 'eventsource-parser';

/** Upper bound of one SSE event; larger events are a protocol violation and end the stream. */
export const MAX_SSE_EVENT_BYTES = 4 * 1024 * 1024;

/** Callbacks of {@link readSseStream}. */
export interface SseCallbacks {
  onEvent(event: EventSourceMessage): void;
  onComment?(): void;
}

/**
 * Consumes `body` until it ends, `signal` aborts, or an event exceeds the size limit.
 * Resolves when the stream ends normally or `signal` aborted (aborting it must end `body`'s
 * iteration, as aborting the request does); rejects on other read errors and on an oversized
 * event. Closing the connection afterwards is the caller's part (it owns the response).
 */
export async function readSseStream(
  body: AsyncIterable<Uint8Array>,
  callbacks: SseCallbacks,
  signal?: AbortSignal,
): Promise<void> {
  let parseError: Error | undefined;
  const parser = createParser({
    onEvent: event => {
      if (!signal?.aborted) callbacks.onEvent(event);
    },
    onComment: () => callbacks.onComment?.(),
    onError: error => {
      if (error.type === 'max-buffer-size-exceeded') parseError = error;
    },
    maxBufferSize: MAX_SSE_EVENT_BYTES,
  });
  const decoder = new StringDecoder('utf8');
  try {
    for await (const chunk of body) {
      if (signal?.aborted) return;
      parser.feed(decoder.write(chunk));
      if (parseError) throw parseError;
    }
  } catch (error) {
    if (signal?.aborted && error !== parseError) return;
    throw error;
  }
}
