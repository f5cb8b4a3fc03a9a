/*
 * The HTTP plumbing under HttpBackendTransport: one request to a backend over undici's
 * keep-alive connection pools, and the response's body as chunks (readBackendMessages.ts reads
 * the JSON-RPC messages out of it). What a status means is HttpBackendTransport's business.
 *
 * Why not the SDK client: it rejects float ids and hides which POST stream a server request
 * arrived on, and the broker needs both (elicitation ids are echoed verbatim, and every message
 * belongs to the call whose stream carried it).
 */
import { StringDecoder } from 'node:string_decoder';
import { type Dispatcher, Pool } from 'undici';
import { abortError } from './abortError';
import type { BackendEndpoint } from './backendTransport';

/** Where one HTTP request goes: the backend, its session, and further headers. */
export interface HttpTarget {
  endpoint: BackendEndpoint;
  /** Sent as `Mcp-Session-Id` when defined. */
  sessionId?: string;
  /** Sent as `Mcp-Protocol-Version` when defined. */
  protocolVersion?: string;
  /** Further per-request headers (lower-case names win over the configured ones). */
  headers?: Record<string, string>;
}

/**
 * Connections to backends are kept open between requests (one TCP and, for https, one TLS
 * handshake per connection instead of per call), in one undici `Pool` per origin. A request is
 * dispatched with a handler of its own (`Exchange`), without undici's `request()` body stream or
 * Node's `http.request`: Node's client (ClientRequest, OutgoingMessage, the agent, the
 * IncomingMessage stream) cost about three times as much CPU per request on loopback, the
 * largest part of the broker's own share of a tool call (issue #27). `fetch` costs more still
 * (WHATWG streams, header objects, transferable signals).
 *
 * An idle kept-alive connection is closed after this long, or 1 s before the backend's own
 * `Keep-Alive: timeout=…` hint when that is shorter (undici reads it). Node servers close
 * idle connections after 5 s: closing first keeps the broker from reusing a connection just as
 * the backend closes it (the request would then fail). Connections in use are not affected.
 */
const IDLE_CONNECTION_TIMEOUT_MS = 4_000;

/** How long before the backend's Keep-Alive hint the broker closes an idle connection. */
const KEEP_ALIVE_HINT_MARGIN_MS = 1_000;

/**
 * The pool of each origin (`protocol//host:port`). No header or body timeout: every request has
 * its own signal (its timeout, its call's end), and an event stream may be silent for hours.
 */
const pools = new Map<string, Pool>();

function poolOf(origin: string): Pool {
  let pool = pools.get(origin);
  if (pool === undefined) {
    pool = new Pool(origin, {
      keepAliveTimeout: IDLE_CONNECTION_TIMEOUT_MS,
      keepAliveTimeoutThreshold: KEEP_ALIVE_HINT_MARGIN_MS,
      headersTimeout: 0,
      bodyTimeout: 0,
    });
    pools.set(origin, pool);
  }
  return pool;
}

/**
 * Idle kept-alive connections to `url`'s origin, waiting in the pool. A test seam: tests
 * wait until a connection is back before they show that the next request reuses it.
 */
export function idleBackendConnections(url: string): number {
  return pools.get(new URL(url).origin)?.stats.free ?? 0;
}

/** How much of a body {@link HttpBackendResponse.text} keeps by default. */
const MAX_TEXT_BYTES = 64 * 1024;

/** How long {@link HttpBackendResponse.discard} waits for the rest of a body before closing it. */
export const DISCARD_GRACE_MS = 5_000;

/** Chunks a body reader may hold before the response is paused until it catches up. */
const MAX_QUEUED_CHUNKS = 16;

/** What a broken connection fails with (what Node's HTTP client called it). */
function connectionReset(cause: Error): Error {
  return Object.assign(
    new Error(`the backend closed the connection (${cause.message})`, { cause }),
    {
      code: 'ECONNRESET',
    },
  );
}

/**
 * True when `error` (undici's) broke a connection that had carried answers before: a kept-alive
 * connection reused (what Node's `reusedSocket` tells). A connection refused or broken before its
 * first answer says nothing of the kind.
 */
function carriedAnswers(error: Error): boolean {
  const socket = (error as { socket?: { bytesRead?: unknown } }).socket;
  return typeof socket?.bytesRead === 'number' && socket.bytesRead > 0;
}

/** A failure of undici's, in the words the rest of the broker knows (socket error codes). */
function nodeError(error: Error): Error {
  return (error as { code?: unknown }).code === 'UND_ERR_SOCKET' ? connectionReset(error) : error;
}

/** The error a closed or discarded response's reading fails with. */
const CLOSED = Object.freeze(
  Object.assign(new Error('the response was closed'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }),
);

/**
 * One request and its response: undici's dispatch handler, the response's status and headers,
 * and its body as a queue of chunks read by one iterator at a time (see
 * {@link HttpBackendResponse.body}). Chunks that arrive are handed on at once; more than
 * MAX_QUEUED_CHUNKS unread pause the connection until the reader catches up.
 */
class Exchange implements Dispatcher.DispatchHandler {
  status = 0;
  headers: Record<string, string | string[] | undefined> = {};
  /** The body has ended (all of it is queued or was read). */
  ended = false;
  /** Why the body's reading fails (the connection broke, the request was aborted or closed). */
  failure: Error | undefined;
  #controller: Dispatcher.DispatchController | undefined;
  #abortReason: Error | undefined;
  #started = false;
  #settled = false;
  #queue: Buffer[] = [];
  #discarding = false;
  #waiting:
    { resolve: (r: IteratorResult<Buffer>) => void; reject: (e: Error) => void } | undefined;
  #closeListeners: Array<() => void> | undefined;
  #giveUp: NodeJS.Timeout | undefined;

  constructor(
    private readonly onStart: (exchange: Exchange) => void,
    /** The request failed before an answer; `reused`: on a connection that had carried one. */
    private readonly onFailure: (error: Error, reused: boolean) => void,
  ) {}

  /** True once the body ended or the exchange failed (nothing more will arrive). */
  get finished(): boolean {
    return this.ended || this.failure !== undefined;
  }

  /** Stops the exchange with `reason` (before or after the response began). */
  abort(reason: Error): void {
    if (this.finished) return;
    if (this.#controller === undefined) this.#abortReason ??= reason;
    else this.#controller.abort(reason);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#abortReason !== undefined) controller.abort(this.#abortReason);
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: Record<string, string | string[] | undefined>,
  ): void {
    if (statusCode < 200) return; // 1xx: the response is still to come
    this.#controller = controller;
    this.status = statusCode;
    this.headers = headers;
    this.#started = true;
    this.onStart(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#discarding) return;
    const waiting = this.#waiting;
    if (waiting !== undefined) {
      this.#waiting = undefined;
      waiting.resolve({ value: chunk, done: false });
      return;
    }
    this.#queue.push(chunk);
    if (this.#queue.length >= MAX_QUEUED_CHUNKS) controller.pause();
  }

  onResponseEnd(): void {
    this.ended = true;
    this.#settle();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    const failure = nodeError(error);
    if (!this.#started) {
      this.#settled = true;
      this.onFailure(failure, carriedAnswers(error));
      return;
    }
    this.failure ??= failure;
    this.#settle();
  }

  /** The next chunk of the body (see HttpBackendResponse.body). */
  next(): Promise<IteratorResult<Buffer>> {
    const chunk = this.#queue.shift();
    if (chunk !== undefined) {
      if (this.#queue.length === 0) this.#controller?.resume();
      return Promise.resolve({ value: chunk, done: false });
    }
    if (this.failure !== undefined) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
    });
  }

  /** Throws the rest of the body away as it arrives; closes the connection after `graceMs`. */
  discard(graceMs: number): void {
    if (this.finished || this.#discarding) return;
    this.#discarding = true;
    this.#queue.length = 0;
    this.#controller?.resume();
    this.#giveUp = setTimeout(() => this.abort(CLOSED), graceMs);
    this.#giveUp.unref();
  }

  /** Calls `listener` once the body has ended or the exchange failed. */
  onClose(listener: () => void): void {
    if (this.finished) listener();
    else (this.#closeListeners ??= []).push(listener);
  }

  #settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    clearTimeout(this.#giveUp);
    const waiting = this.#waiting;
    this.#waiting = undefined;
    if (waiting !== undefined) {
      if (this.failure !== undefined) waiting.reject(this.failure);
      else waiting.resolve({ value: undefined, done: true });
    }
    const listeners = this.#closeListeners;
    this.#closeListeners = undefined;
    listeners?.forEach(listener => listener());
  }
}

/** A backend's answer to one HTTP request: status, headers, and the body still to be read. */
export class HttpBackendResponse {
  /** @internal */
  constructor(private readonly exchange: Exchange) {}

  /** The HTTP status code. */
  get status(): number {
    return this.exchange.status;
  }

  /** True for a 2xx status. */
  get ok(): boolean {
    return this.status >= 200 && this.status < 300;
  }

  /** A response header (first value), by lower-case name. */
  header(name: string): string | undefined {
    const value = this.exchange.headers[name];
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
    const exchange = this.exchange;
    return {
      [Symbol.asyncIterator]: () => ({
        next: () => exchange.next(),
        // Leaving early: the rest stays queued (and the connection assigned) until discard()
        // or close(); a reader that is not there pauses the connection after a few chunks.
        return: () => Promise.resolve({ value: undefined, done: true }),
      }),
    };
  }

  /**
   * Throws the rest of the body away, reading it to its end so that the connection goes back to
   * the pool. A backend ends a POST's event stream right after the response (MCP says it
   * SHOULD); one that keeps it open longer than `graceMs` has it closed.
   */
  discard(graceMs = DISCARD_GRACE_MS): void {
    this.exchange.discard(graceMs);
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
    this.exchange.abort(CLOSED);
  }

  /** Calls `listener` once the body has ended or the connection closed, whichever comes first. */
  onClose(listener: () => void): void {
    this.exchange.onClose(listener);
  }
}

/**
 * Posts a JSON-RPC message (already serialised) to the backend, with the broker's headers.
 * `replayable: false` (a `tools/call`, which may have effects) is never sent twice: a reused
 * connection found closed fails the request instead (see {@link requestBackend}).
 */
export function postToBackend(
  target: HttpTarget,
  body: string,
  signal: AbortSignal,
  options: { replayable?: boolean } = {},
): Promise<HttpBackendResponse> {
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
  target: HttpTarget,
  signal: AbortSignal,
): Promise<HttpBackendResponse> {
  return requestBackend('GET', target, { accept: 'text/event-stream' }, undefined, signal);
}

/** Ends a backend session (HTTP DELETE); backends that do not support it answer 405, which is fine. */
export async function deleteBackendSession(
  session: HttpTarget,
  signal: AbortSignal,
): Promise<void> {
  if (session.sessionId === undefined) return;
  const response = await requestBackend('DELETE', session, {}, undefined, signal);
  response.discard();
}

/** How often a request is sent again after finding its reused connection closed. */
const STALE_CONNECTION_RETRIES = 3;

/**
 * What a request to one backend URL needs that does not change between requests: its pool (by
 * origin), its path, and the headers every request to it carries (the configured ones and
 * `host`), as a flat list of lower-case names and values. Parsing the URL and storing each
 * header on every request were a measurable part of a tool call's cost (issue #21).
 */
interface PreparedEndpoint {
  readonly pool: Pool;
  readonly path: string;
  /** `[name, value, name, value, …]`, names in lower case, no name twice. */
  readonly headers: readonly string[];
}

/** Prepared endpoints by URL and configured headers; cleared when it holds this many. */
const MAX_PREPARED_ENDPOINTS = 1_000;
const preparedEndpoints = new Map<
  string,
  { source: BackendEndpoint; prepared: PreparedEndpoint }
>();

/** The prepared form of `endpoint`, parsed once per URL (throws for an invalid URL). */
function prepare(endpoint: BackendEndpoint): PreparedEndpoint {
  const known = preparedEndpoints.get(endpoint.url);
  if (
    known !== undefined &&
    (known.source === endpoint || sameHeaders(known.source.headers, endpoint.headers))
  ) {
    return known.prepared;
  }
  const url = new URL(endpoint.url);
  const headers: string[] = [];
  setHeaderIn(headers, 'host', url.host);
  if (url.username !== '' || url.password !== '') {
    const credentials = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    setHeaderIn(headers, 'authorization', `Basic ${Buffer.from(credentials).toString('base64')}`);
  }
  for (const name of Object.keys(endpoint.headers)) {
    setHeaderIn(headers, name, endpoint.headers[name]);
  }
  const prepared: PreparedEndpoint = {
    pool: poolOf(url.origin),
    path: `${url.pathname}${url.search}`,
    headers,
  };
  if (preparedEndpoints.size >= MAX_PREPARED_ENDPOINTS) preparedEndpoints.clear();
  preparedEndpoints.set(endpoint.url, { source: endpoint, prepared });
  return prepared;
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const names = Object.keys(a);
  if (names.length !== Object.keys(b).length) return false;
  return names.every(name => b[name] === a[name]);
}

/** Sets a header in a flat list (case-insensitively: a later value replaces an earlier one). */
function setHeaderIn(headers: string[], name: string, value: string): void {
  const lower = name.toLowerCase();
  for (let i = 0; i < headers.length; i += 2) {
    if (headers[i] === lower) {
      headers[i + 1] = value;
      return;
    }
  }
  headers.push(lower, value);
}

/**
 * One HTTP request to a backend. Resolves with the response once its headers arrived; rejects
 * when the connection fails or `signal` aborts first (an abort later breaks the body's reading).
 *
 * A reused connection that breaks before any answer (the backend closed it, ECONNRESET, EPIPE)
 * was most likely closed by the backend as idle just as it was reused; a `replayable` request
 * is then sent again on a new connection. Not a `tools/call`: the same error is what a
 * backend that crashed while running the tool produces, and running a tool twice is worse than
 * reporting the failure.
 *
 * The signal is watched by one listener per request, removed when the exchange ends.
 */
function requestBackend(
  method: 'GET' | 'POST' | 'DELETE',
  target: HttpTarget,
  extraHeaders: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
  replayable = true,
): Promise<HttpBackendResponse> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(abortError(signal.reason));
      return;
    }
    let endpoint: PreparedEndpoint;
    try {
      endpoint = prepare(target.endpoint);
    } catch (error) {
      reject(error);
      return;
    }
    const options: Dispatcher.DispatchOptions = {
      method,
      path: endpoint.path,
      headers: requestHeaders(endpoint, target, extraHeaders, body),
      body,
    };
    let retriesLeft = STALE_CONNECTION_RETRIES;
    let exchange: Exchange;
    const onAbort = () => exchange.abort(abortError(signal.reason));
    const stopWatching = () => signal.removeEventListener('abort', onAbort);
    const attempt = () => {
      exchange = new Exchange(
        started => {
          resolve(new HttpBackendResponse(started));
          started.onClose(stopWatching);
        },
        (error, reused) => {
          // Node's documented remedy for a kept-alive connection the server closed meanwhile.
          if (
            replayable &&
            reused &&
            isStaleConnectionError(error) &&
            retriesLeft > 0 &&
            !signal.aborted
          ) {
            retriesLeft -= 1;
            attempt();
            return;
          }
          stopWatching();
          reject(signal.aborted ? abortError(signal.reason) : error);
        },
      );
      endpoint.pool.dispatch(options, exchange);
    };
    signal.addEventListener('abort', onAbort);
    attempt();
  });
}

function isStaleConnectionError(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/**
 * The request's headers as Node's raw list (stored as they are, without a `setHeader` each):
 * the endpoint's, the target's, the request's own, the session's, and the body's length.
 */
function requestHeaders(
  endpoint: PreparedEndpoint,
  target: HttpTarget,
  extra: Record<string, string>,
  body: string | undefined,
): string[] {
  const headers = endpoint.headers.slice();
  if (target.headers !== undefined) {
    for (const name of Object.keys(target.headers)) {
      setHeaderIn(headers, name, target.headers[name]);
    }
  }
  for (const name of Object.keys(extra)) setHeaderIn(headers, name, extra[name]);
  if (target.sessionId !== undefined) setHeaderIn(headers, 'mcp-session-id', target.sessionId);
  if (target.protocolVersion !== undefined) {
    setHeaderIn(headers, 'mcp-protocol-version', target.protocolVersion);
  }
  if (body !== undefined) setHeaderIn(headers, 'content-length', String(Buffer.byteLength(body)));
  return headers;
}
