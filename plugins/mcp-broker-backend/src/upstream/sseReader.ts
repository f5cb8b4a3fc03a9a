/*
 * Reads a server-sent-events body (a fetch Response body) and hands each event to a callback.
 * Comments (keep-alives) and `retry:` fields are reported separately so callers can treat
 * them as liveness signals without parsing them as messages.
 */
import { createParser, EventSourceMessage } from 'eventsource-parser';

/** Upper bound of one SSE event; larger events are a protocol violation and end the stream. */
export const MAX_SSE_EVENT_BYTES = 4 * 1024 * 1024;

/** Callbacks of {@link readSseStream}. */
export interface SseCallbacks {
  onEvent(event: EventSourceMessage): void;
  onComment?(): void;
}

/**
 * Consumes `body` until it ends, the signal aborts, or an event exceeds the size limit.
 * Resolves when the stream ends normally; rejects on read errors or an oversized event.
 */
export async function readSseStream(
  body: ReadableStream<Uint8Array>,
  callbacks: SseCallbacks,
  signal?: AbortSignal,
): Promise<void> {
  let parseError: Error | undefined;
  const parser = createParser({
    onEvent: event => callbacks.onEvent(event),
    onComment: () => callbacks.onComment?.(),
    onError: error => {
      if (error.type === 'max-buffer-size-exceeded') parseError = error;
    },
    maxBufferSize: MAX_SSE_EVENT_BYTES,
  });
  const reader = body.getReader();
  const decoder = new TextDecoder();
  const onAbort = () => {
    reader.cancel().catch(() => {});
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) return;
      const { done, value } = await reader.read();
      if (done) return;
      parser.feed(decoder.decode(value, { stream: true }));
      if (parseError) throw parseError;
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.cancel().catch(() => {});
  }
}
