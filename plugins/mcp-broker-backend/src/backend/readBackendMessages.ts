/*
 * The JSON-RPC messages of a backend's answer body: an SSE stream read event by event, or one
 * JSON document. Nothing here knows MCP beyond "a body holds JSON-RPC messages".
 */
import { StringDecoder } from 'node:string_decoder';
import { parseJsonRpcMessage } from '../protocol/jsonRpcMessage';
import { abortError, isAbortError } from './abortError';
import { BackendTransportError, type BackendStreamItem } from './backendTransport';
import { isSseEventTooLarge, readSseEvents } from './sseReader';

/** The part of a backend's HTTP answer that {@link readBackendMessages} reads. */
export interface BackendAnswerBody {
  /** Whether the answer is an SSE stream (else one JSON document). */
  readonly isEventStream: boolean;
  /** The body's chunks. */
  readonly body: AsyncIterable<Buffer>;
  /** Lets the rest of the body arrive unread, so the connection can be reused. */
  discard(): void;
  /** Closes the connection. */
  close(): void;
}

/**
 * Largest single message the broker accepts from a backend (an SSE event's data in characters,
 * a JSON body in bytes). A backend that sends more without finishing a message is cut off
 * rather than buffered for without limit.
 */
export const MAX_BACKEND_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Reads the JSON-RPC messages of a successful response, in order. Ends when the backend ends
 * the stream; throws a BackendTransportError when the connection breaks (`broken`, with the
 * socket error's code) or one message exceeds {@link MAX_BACKEND_MESSAGE_BYTES} (`too-large`),
 * and the abort when the request's signal aborts. Stopping early discards the rest.
 */
export async function* readBackendMessages(
  response: BackendAnswerBody,
  maxMessageBytes = MAX_BACKEND_MESSAGE_BYTES,
  /** `report`: an SSE event of another type is a malformed item (an event stream's reader counts it). */
  otherEvents: 'skip' | 'report' = 'skip',
  /** The request's signal: once it aborted, the reading ends with the abort, whatever broke. */
  signal?: AbortSignal,
): AsyncGenerator<BackendStreamItem> {
  let outcome: 'ended' | 'stopped' | 'failed' = 'stopped';
  let jsonBody = '';
  try {
    if (response.isEventStream) {
      for await (const event of readSseEvents(response.body, { maxEventSize: maxMessageBytes })) {
        // Events other than `message` (the default) are not JSON-RPC traffic.
        if (event.event !== undefined && event.event !== 'message') {
          if (otherEvents === 'report') {
            yield { type: 'malformed', text: event.data, reason: 'unexpected SSE event type' };
          }
          continue;
        }
        if (event.data === '') continue; // priming event of SEP-1699 resumable streams
        yield itemOf(event.data, event.id);
      }
    } else {
      jsonBody = await readJsonBody(response.body, maxMessageBytes);
    }
    outcome = 'ended';
  } catch (error) {
    outcome = 'failed';
    if (signal?.aborted) throw abortError(signal.reason);
    throw readFailure(error, maxMessageBytes);
  } finally {
    // The caller stopped early (it had its answer): let the rest arrive and keep the connection.
    if (outcome === 'stopped') response.discard();
    else if (outcome === 'failed') response.close();
  }
  if (jsonBody.trim() !== '') yield itemOf(jsonBody, undefined);
}

/** The error a body read ends with: the abort as it is, anything else a transport failure. */
function readFailure(error: unknown, maxMessageBytes: number): unknown {
  if (error instanceof BackendTransportError) return error;
  if (isSseEventTooLarge(error)) return tooLarge(maxMessageBytes);
  if (isAbortError(error)) return error;
  const code = errorCode(error);
  return new BackendTransportError('broken', code ?? describeError(error), undefined, code);
}

function tooLarge(maxBytes: number): BackendTransportError {
  return new BackendTransportError(
    'too-large',
    `a message larger than the broker's limit of ${maxBytes} bytes`,
  );
}

/** The socket error's code (ECONNREFUSED, ECONNRESET, …), also when wrapped in `cause`. */
export function errorCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== 'ABORT_ERR') return code;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A JSON body as text; more than `maxBytes` is a `too-large` transport failure. */
async function readJsonBody(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw tooLarge(maxBytes);
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}

function itemOf(text: string, eventId: string | undefined): BackendStreamItem {
  const parsed = parseJsonRpcMessage(text);
  return parsed ? { type: 'message', parsed, eventId } : { type: 'malformed', text };
}
