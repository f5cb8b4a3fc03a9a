/*
 * The broker's side of the streamable-HTTP transport towards a backend, at the HTTP level.
 *
 * Why not the SDK client: it rejects float ids and hides which POST stream a server request
 * arrived on, and the broker needs both (elicitation ids are echoed verbatim, and every message
 * belongs to the call whose stream carried it). A POST answered with SSE is read message by
 * message; one answered with JSON yields its single message.
 */
import { createParser } from 'eventsource-parser';
import { ParsedJsonRpcMessage, parseJsonRpcMessage } from './jsonRpcMessage';

/** Where a backend lives and the broker's own credentials for it. */
export interface BackendEndpoint {
  /** The backend's configured name (`[a-z0-9-]+`). */
  name: string;
  /** Its streamable-HTTP endpoint. */
  url: string;
  /** Headers the broker sends to it (its credentials); never the client's. */
  headers: Record<string, string>;
}

/** An initialized backend session the broker holds on a client's behalf. */
export interface BackendSessionRef {
  endpoint: BackendEndpoint;
  /** `Mcp-Session-Id` the backend assigned; undefined for a stateless backend. */
  sessionId: string | undefined;
  /** Protocol version the backend agreed to. */
  protocolVersion: string;
}

/** One message read from a backend response stream (or a line that was not one). */
export type BackendStreamItem =
  | { type: 'message'; parsed: ParsedJsonRpcMessage; eventId: string | undefined }
  | { type: 'malformed'; text: string };

/** Posts a JSON-RPC message (already serialised) to the backend, with the broker's headers. */
export async function postToBackend(
  target: { endpoint: BackendEndpoint; sessionId?: string; protocolVersion?: string },
  body: string,
  signal: AbortSignal,
): Promise<Response> {
  return fetch(target.endpoint.url, {
    method: 'POST',
    headers: protocolHeaders(target, {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    }),
    body,
    signal,
  });
}

/** Ends a backend session (HTTP DELETE); backends that do not support it answer 405, which is fine. */
export async function deleteBackendSession(
  session: BackendSessionRef,
  signal: AbortSignal,
): Promise<void> {
  if (session.sessionId === undefined) return;
  const response = await fetch(session.endpoint.url, {
    method: 'DELETE',
    headers: protocolHeaders(session, {}),
    signal,
  });
  await response.body?.cancel();
}

function protocolHeaders(
  target: { endpoint: BackendEndpoint; sessionId?: string; protocolVersion?: string },
  extra: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = { ...target.endpoint.headers, ...extra };
  if (target.sessionId !== undefined) headers['mcp-session-id'] = target.sessionId;
  if (target.protocolVersion !== undefined) headers['mcp-protocol-version'] = target.protocolVersion;
  return headers;
}

/**
 * Largest single message the broker accepts from a backend. A backend that sends more without
 * finishing a message is cut off rather than buffered for without limit.
 */
export const MAX_BACKEND_MESSAGE_BYTES = 16 * 1024 * 1024;

/** A backend sent more than the message size limit without completing a message. */
export class BackendMessageTooLargeError extends Error {
  readonly name = 'BackendMessageTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`a message larger than ${limitBytes} bytes`);
  }
}

/**
 * Reads the JSON-RPC messages of a successful POST response, in order. Ends when the backend
 * ends the stream; throws when the connection breaks (or the signal given to fetch aborts), and
 * when one message exceeds {@link MAX_BACKEND_MESSAGE_BYTES}.
 */
export async function* readBackendMessages(
  response: Response,
  maxMessageBytes = MAX_BACKEND_MESSAGE_BYTES,
): AsyncGenerator<BackendStreamItem> {
  if (!response.body) return;
  const isEventStream = (response.headers.get('content-type') ?? '').includes('text/event-stream');
  const pending: BackendStreamItem[] = [];
  const parser = createParser({
    onEvent(event) {
      // Events other than `message` (the default) are not JSON-RPC traffic.
      if (event.event !== undefined && event.event !== 'message') return;
      if (event.data === '') return; // priming event of SEP-1699 resumable streams
      pending.push(itemOf(event.data, event.id));
    },
  });
  const decoder = new TextDecoder();
  const reader = response.body.getReader();
  let jsonBody = '';
  let bytesSinceLastMessage = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytesSinceLastMessage += value.byteLength;
      if (bytesSinceLastMessage > maxMessageBytes) {
        throw new BackendMessageTooLargeError(maxMessageBytes);
      }
      const text = decoder.decode(value, { stream: true });
      if (!isEventStream) {
        jsonBody += text;
        continue;
      }
      parser.feed(text);
      if (pending.length > 0) bytesSinceLastMessage = 0;
      while (pending.length > 0) yield pending.shift()!;
    }
  } finally {
    reader.releaseLock();
    await response.body.cancel().catch(() => undefined);
  }
  jsonBody += decoder.decode();
  if (!isEventStream && jsonBody.trim() !== '') yield itemOf(jsonBody, undefined);
}

function itemOf(text: string, eventId: string | undefined): BackendStreamItem {
  const parsed = parseJsonRpcMessage(text);
  return parsed ? { type: 'message', parsed, eventId } : { type: 'malformed', text };
}
