/*
 * The backend layer's one server-sent-events reader: turns the bytes of a backend response (see
 * `HttpBackendResponse.body`) into SSE events, for both the POST streams of requests and tool
 * calls and the broker's GET event stream per backend (`readBackendMessages`, httpExchange.ts).
 * Comments (keep-alives) are reported separately so callers can treat them as liveness signals
 * without parsing them as messages. An event larger than the caller's limit ends the reading
 * with eventsource-parser's `max-buffer-size-exceeded` error (see {@link isSseEventTooLarge}):
 * a backend that never finishes an event is cut off rather than buffered without limit.
 */
import { StringDecoder } from 'node:string_decoder';
import { createParser, EventSourceMessage, ParseError } from 'eventsource-parser';

/** Upper bound of one SSE event on a GET event stream; larger events end the stream. */
export const MAX_SSE_EVENT_BYTES = 4 * 1024 * 1024;

/** Options of {@link readSseEvents}. */
export interface SseReadOptions {
  /** Largest event (its data and any unfinished line), in characters. */
  maxEventSize: number;
  /** Called for every comment line (e.g. a keep-alive). */
  onComment?(): void;
  /** Stops the reading (without an error) at the next chunk once aborted. */
  signal?: AbortSignal;
}

/**
 * Yields the events of `body` in order, as they complete. Ends when `body` ends or `signal`
 * aborted; throws when reading `body` fails and when an event exceeds `maxEventSize`.
 */
export async function* readSseEvents(
  body: AsyncIterable<Uint8Array>,
  options: SseReadOptions,
): AsyncGenerator<EventSourceMessage> {
  const pending: EventSourceMessage[] = [];
  let parseError: ParseError | undefined;
  const parser = createParser({
    onEvent: event => pending.push(event),
    onComment: () => options.onComment?.(),
    onError: error => {
      if (error.type === 'max-buffer-size-exceeded') parseError = error;
    },
    maxBufferSize: options.maxEventSize,
  });
  const decoder = new StringDecoder('utf8');
  for await (const chunk of body) {
    if (options.signal?.aborted) return;
    parser.feed(decoder.write(chunk));
    while (pending.length > 0) yield pending.shift()!;
    if (parseError) throw parseError;
  }
}

/** True for the error {@link readSseEvents} throws for an event over its size limit. */
export function isSseEventTooLarge(error: unknown): boolean {
  return error instanceof ParseError && error.type === 'max-buffer-size-exceeded';
}
