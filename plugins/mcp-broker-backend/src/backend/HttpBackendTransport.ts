/*
 * HttpBackendTransport: the broker's side of the streamable-HTTP transport towards a backend
 * (MCP 2025-03-26 … 2025-11-25), at the HTTP level; the one implementation of BackendTransport
 * (backendTransport.ts) so far. Every request to a backend MCP server goes through it: the
 * broker's own session (StreamableHttpClient) and the per-client tool calls (BackendSessionPool,
 * ToolCallForwarder).
 *
 * Why not the SDK client: it rejects float ids and hides which POST stream a server request
 * arrived on, and the broker needs both (elicitation ids are echoed verbatim, and every message
 * belongs to the call whose stream carried it). A POST answered with SSE is read message by
 * message; one answered with JSON yields its single message.
 */
import http from 'node:http';
import https from 'node:https';
import { StringDecoder } from 'node:string_decoder';
import { parseJsonRpcMessage } from '../protocol/jsonRpcMessage';
import { BackendMessageTooLargeError } from './backendErrors';
import { isSseEventTooLarge, readSseEvents } from './sseReader';
import type {
  BackendResponse,
  BackendStreamItem,
  BackendTarget,
  BackendTransport,
} from './backendTransport';

/**
 * Connections to backends are kept open between requests (one TCP and, for https, one TLS
 * handshake per connection instead of per call). Node's `fetch` would do the same, but costs
 * several times more CPU per request (WHATWG streams, header objects, transferable signals),
 * which on the tool-call path was the broker's largest single cost.
 */
/**
 * An idle kept-alive connection is closed after this long, or 1 s before the backend's own
 * `Keep-Alive: timeout=…` hint when that is shorter (Node's agent reads it). Node servers close
 * idle connections after 5 s: closing first keeps the broker from reusing a connection just as
 * the backend closes it (the request would then fail). Connections in use are not affected.
 */
const IDLE_CONNECTION_TIMEOUT_MS = 4_000;

const agents = {
  'http:': new http.Agent({
    keepAlive: true,
    scheduling: 'lifo',
    timeout: IDLE_CONNECTION_TIMEOUT_MS,
  }),
  'https:': new https.Agent({
    keepAlive: true,
    scheduling: 'lifo',
    timeout: IDLE_CONNECTION_TIMEOUT_MS,
  }),
};

/**
 * Idle kept-alive connections to `url`'s host and port, waiting in the pool. A test seam: tests
 * wait until a connection is back before they show that the next request reuses it.
 */
export function idleBackendConnections(url: string): number {
  const { protocol, hostname, port } = new URL(url);
  const pool = (protocol === 'https:' ? agents['https:'] : agents['http:']).freeSockets;
  return Object.entries(pool)
    .filter(([name]) => name.startsWith(`${hostname}:${port}:`))
    .reduce((count, [, sockets]) => count + (sockets?.length ?? 0), 0);
}

/** How much of a body {@link HttpBackendResponse.text} keeps by default. */
const MAX_TEXT_BYTES = 64 * 1024;

/** How long {@link HttpBackendResponse.discard} waits for the rest of a body before closing it. */
export const DISCARD_GRACE_MS = 5_000;

/** A backend's answer to one HTTP request: status, headers, and the body still to be read. */
export class HttpBackendResponse implements BackendResponse {
  /** @internal */
  constructor(private readonly message: http.IncomingMessage) {}

  /** The HTTP status code. */
  get status(): number {
    return this.message.statusCode ?? 0;
  }

  /** True for a 2xx status. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** A response header (first value), by lower-case name. */
  header(name: string): string | undefined {
    const value = this.message.headers[name];
    return Array.isArray(value) ? value[0] : value;
  }

  /** True when the body is a server-sent-events stream. */
  get isEventStream(): boolean {
    return (this.header('content-type') ?? '').includes('text/event-stream');
  }

  /**
   * The body's bytes, in order; the iteration throws when the connection breaks. Leaving the
   * loop early does not close the connection: call {@link HttpBackendResponse.discard} or
   * {@link HttpBackendResponse.close}.
   */
  get body(): AsyncIterable<Buffer> {
    return this.message.iterator({ destroyOnReturn: false });
  }

  /**
   * Throws the rest of the body away, reading it to its end so that the connection goes back to
   * the pool. A backend ends a POST's event stream right after the response (MCP says it
   * SHOULD); one that keeps it open longer than `graceMs` has it closed.
   */
  discard(graceMs = DISCARD_GRACE_MS): void {
    if (this.message.readableEnded || this.message.destroyed) return;
    // Even a body that has fully arrived (`complete`, e.g. an empty 202) must be read to its
    // end: only then does the socket go back to the pool, unreferenced. Left unread, it stays
    // assigned to this response, is never reused, and keeps the process alive.
    this.message.resume();
    if (this.message.complete) return;
    const giveUp = setTimeout(() => this.message.destroy(), graceMs);
    giveUp.unref();
    this.message.once('close', () => clearTimeout(giveUp));
  }

  /**
   * Reads the body as UTF-8 text, keeping at most `maxBytes` (error bodies are only shown or
   * searched, so a large one is cut rather than buffered). The whole body is read, so the
   * connection goes back to the pool.
   */
  async text(maxBytes = MAX_TEXT_BYTES): Promise<string> {
    const decoder = new StringDecoder('utf8');
    let text = '';
    let kept = 0;
    let cut = false;
    for await (const chunk of this.body) {
      if (kept >= maxBytes) {
        cut = true;
        continue;
      }
      const part = chunk.subarray(0, maxBytes - kept);
      cut ||= part.byteLength < chunk.byteLength;
      kept += part.byteLength;
      text += decoder.write(part);
    }
    // A character cut in two at the limit is dropped rather than shown as U+FFFD.
    return cut ? text : text + decoder.end();
  }

  /**
   * Closes the connection without reading further (after a broken or oversized stream, or to
   * end an event stream).
   */
  close(): void {
    this.message.destroy();
  }

  /** Calls `listener` once the body has ended or the connection closed, whichever comes first. */
  onClose(listener: () => void): void {
    if (this.message.destroyed) listener();
    else this.message.once('close', listener);
  }
}

/**
 * Posts a JSON-RPC message (already serialised) to the backend, with the broker's headers.
 * `replayable: false` (a `tools/call`, which may have effects) is never sent twice: a reused
 * connection found closed fails the request instead (see {@link requestBackend}).
 */
export function postToBackend(
  target: BackendTarget,
  body: string,
  signal: AbortSignal,
  options: { replayable?: boolean } = {},
): Promise<BackendResponse> {
  return requestBackend(
    'POST',
    target,
    { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body,
    signal,
    options.replayable ?? true,
  );
}

/**
 * Opens a session's GET event stream (`accept: text/event-stream`). Resolves once the headers
 * arrived, whatever the status; the stream lives until `signal` aborts or either side closes it.
 */
export function openBackendEventStream(
  target: BackendTarget,
  signal: AbortSignal,
): Promise<BackendResponse> {
  return requestBackend('GET', target, { accept: 'text/event-stream' }, undefined, signal);
}

/** Ends a backend session (HTTP DELETE); backends that do not support it answer 405, which is fine. */
export async function deleteBackendSession(
  session: BackendTarget,
  signal: AbortSignal,
): Promise<void> {
  if (session.sessionId === undefined) return;
  const response = await requestBackend('DELETE', session, {}, undefined, signal);
  response.discard();
}

/** The streamable-HTTP {@link BackendTransport}; stateless, so one instance serves everyone. */
export class HttpBackendTransport implements BackendTransport {
  /** The instance the broker uses (the keep-alive agents are shared anyway). */
  static readonly shared = new HttpBackendTransport();

  post(
    target: BackendTarget,
    body: string,
    signal: AbortSignal,
    options?: { replayable?: boolean },
  ): Promise<BackendResponse> {
    return postToBackend(target, body, signal, options);
  }

  openEventStream(target: BackendTarget, signal: AbortSignal): Promise<BackendResponse> {
    return openBackendEventStream(target, signal);
  }

  deleteSession(target: BackendTarget, signal: AbortSignal): Promise<void> {
    return deleteBackendSession(target, signal);
  }
}

/** How often a request is sent again after finding its reused connection closed. */
const STALE_CONNECTION_RETRIES = 3;

/**
 * One HTTP request to a backend. Resolves with the response once its headers arrived; rejects
 * when the connection fails or `signal` aborts first (an abort later breaks the body's stream).
 *
 * A reused connection that fails before any answer (ECONNRESET, EPIPE) was most likely closed
 * by the backend as idle just as it was reused; a `replayable` request is then sent again on a
 * new connection. Not a `tools/call`: the same error is what a backend that crashed while
 * running the tool produces, and running a tool twice is worse than reporting the failure.
 */
function requestBackend(
  method: 'GET' | 'POST' | 'DELETE',
  target: BackendTarget,
  extraHeaders: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
  replayable = true,
): Promise<BackendResponse> {
  return new Promise((resolve, reject) => {
    let url: URL;
    try {
      url = new URL(target.endpoint.url);
    } catch (error) {
      reject(error);
      return;
    }
    const transport = url.protocol === 'https:' ? https : http;
    const agent = url.protocol === 'https:' ? agents['https:'] : agents['http:'];
    const headers = protocolHeaders(target, extraHeaders);
    const attempt = (retriesLeft: number) => {
      const request = transport.request(url, { method, agent, headers, signal });
      let answered = false;
      request.once('response', message => {
        answered = true;
        resolve(new HttpBackendResponse(message));
      });
      request.once('error', error => {
        // Node's documented remedy for a kept-alive connection the server closed meanwhile.
        if (
          replayable &&
          !answered &&
          request.reusedSocket &&
          isStaleConnectionError(error) &&
          retriesLeft > 0 &&
          !signal.aborted
        ) {
          attempt(retriesLeft - 1);
        } else {
          reject(error);
        }
      });
      request.end(body);
    };
    attempt(STALE_CONNECTION_RETRIES);
  });
}

function isStaleConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

function protocolHeaders(
  target: BackendTarget,
  extra: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = {
    ...target.endpoint.headers,
    ...target.headers,
    ...extra,
  };
  if (target.sessionId !== undefined) headers['mcp-session-id'] = target.sessionId;
  if (target.protocolVersion !== undefined)
    headers['mcp-protocol-version'] = target.protocolVersion;
  return headers;
}

/**
 * Largest single message the broker accepts from a backend (an SSE event's data in characters,
 * a JSON body in bytes). A backend that sends more without finishing a message is cut off
 * rather than buffered for without limit.
 */
export const MAX_BACKEND_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * Reads the JSON-RPC messages of a successful POST response, in order. Ends when the backend
 * ends the stream; throws when the connection breaks (or the request's signal aborts), and
 * when one message exceeds {@link MAX_BACKEND_MESSAGE_BYTES}. Stopping early discards the rest.
 */
export async function* readBackendMessages(
  response: BackendResponse,
  maxMessageBytes = MAX_BACKEND_MESSAGE_BYTES,
): AsyncGenerator<BackendStreamItem> {
  let outcome: 'ended' | 'stopped' | 'failed' = 'stopped';
  let jsonBody = '';
  try {
    if (response.isEventStream) {
      for await (const event of readSseEvents(response.body, { maxEventSize: maxMessageBytes })) {
        // Events other than `message` (the default) are not JSON-RPC traffic.
        if (event.event !== undefined && event.event !== 'message') continue;
        if (event.data === '') continue; // priming event of SEP-1699 resumable streams
        yield itemOf(event.data, event.id);
      }
    } else {
      jsonBody = await readJsonBody(response.body, maxMessageBytes);
    }
    outcome = 'ended';
  } catch (error) {
    outcome = 'failed';
    if (isSseEventTooLarge(error)) throw new BackendMessageTooLargeError(maxMessageBytes);
    throw error;
  } finally {
    // The caller stopped early (it had its answer): let the rest arrive and keep the connection.
    if (outcome === 'stopped') response.discard();
    else if (outcome === 'failed') response.close();
  }
  if (jsonBody.trim() !== '') yield itemOf(jsonBody, undefined);
}

/** A JSON body as text; more than `maxBytes` is a {@link BackendMessageTooLargeError}. */
async function readJsonBody(body: AsyncIterable<Buffer>, maxBytes: number): Promise<string> {
  const decoder = new StringDecoder('utf8');
  let text = '';
  let bytes = 0;
  for await (const chunk of body) {
    bytes += chunk.byteLength;
    if (bytes > maxBytes) throw new BackendMessageTooLargeError(maxBytes);
    text += decoder.write(chunk);
  }
  return text + decoder.end();
}

function itemOf(text: string, eventId: string | undefined): BackendStreamItem {
  const parsed = parseJsonRpcMessage(text);
  return parsed ? { type: 'message', parsed, eventId } : { type: 'malformed', text };
}
