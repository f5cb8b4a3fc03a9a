/*
 * The client half of MCP streamable HTTP, spoken directly so the broker controls every detail
 * the SDK client hides: which POST stream a message arrived on, 404/405 handling, the GET
 * stream's lifetime, and ids of any JSON type. One instance per backend; it holds no session
 * state itself (the caller passes the session id and protocol version).
 *
 * It goes over the same BackendTransport as tool calls (HttpBackendTransport: node:http with
 * shared keep-alive agents; fetch cost several times more CPU per request). Timeouts and
 * aborts are per-request signals (requestSignal.ts) that detach from long-lived ones when done.
 */
import type { BrokerBackend } from '../types';
import {
  classifyJsonRpc,
  JsonRpcErrorObject,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../protocol/jsonRpc';
import type { BackendResponse, BackendTarget, BackendTransport } from './backendTransport';
import { HttpBackendTransport, readBackendMessages } from './HttpBackendTransport';
import {
  BackendMessageTooLargeError,
  BackendProtocolError,
  BackendRpcError,
  BackendSessionLostError,
  BackendUnavailableError,
} from './backendErrors';
import { RequestSignal, requestSignal } from './requestSignal';
import { isModernProtocolVersion } from '../protocol/versions';

/** The broker's session with a backend, as far as HTTP is concerned. */
export interface BackendSession {
  readonly id?: string;
  readonly protocolVersion?: string;
  /** Further headers of this request (a stateless 2026-07-28 request's `Mcp-Method` …). */
  readonly headers?: Record<string, string>;
}

/** Options of a single backend request. */
export interface BackendRequestOptions {
  /** Signals that abort the request (e.g. the caller's and the connection's lifetime). */
  signals?: ReadonlyArray<AbortSignal | undefined>;
  timeoutMs?: number;
  /** Called for every other message the backend sends on this request's stream. */
  onServerMessage?: (message: JsonRpcMessage) => void;
}

/** The result of a POSTed request: the matching response and the session id the backend set. */
export interface BackendRequestResult {
  response: JsonRpcResponse;
  sessionId?: string;
}

/** Removes user info from a URL so that it can appear in logs and status. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return '(invalid url)';
  }
}

/** Speaks streamable HTTP to one backend with the broker's own credentials. */
export class StreamableHttpClient {
  private readonly transport: BackendTransport;

  constructor(
    private readonly backend: BrokerBackend,
    private readonly defaultTimeoutMs: number,
    transport?: BackendTransport,
  ) {
    this.transport = transport ?? HttpBackendTransport.shared;
  }

  private target(session: BackendSession): BackendTarget {
    return {
      endpoint: this.backend,
      sessionId: session.id,
      protocolVersion: session.protocolVersion,
      headers: session.headers,
    };
  }

  /**
   * Waits for a response's headers and turns failures into the backend errors: connection
   * failures and timeouts into BackendUnavailableError, a lost session into
   * BackendSessionLostError, rejected credentials into 401/403. An abort by a parent signal
   * throws the parent's reason (see `abortError`). Resolves with 2xx and 405 responses (the
   * body unread); other bodies are read (at most 64 KiB kept), so the connection is reused.
   */
  private async check(
    pending: Promise<BackendResponse>,
    session: BackendSession,
    scope: RequestSignal,
  ): Promise<BackendResponse> {
    let response: BackendResponse;
    try {
      response = await pending;
    } catch (error) {
      throw this.failure(error, scope, 'timed out');
    }
    if (response.ok || response.status === 405) return response;
    const text = await response.text().catch(() => '');
    if (session.id !== undefined) {
      // Servers answer an unknown session with 404 (the spec) or, like server-everything, 400.
      if (response.status === 404 || (response.status === 400 && /session/i.test(text))) {
        throw new BackendSessionLostError(this.backend.name, response.status);
      }
    }
    if (
      (response.status === 400 || response.status === 404) &&
      session.protocolVersion !== undefined &&
      isModernProtocolVersion(session.protocolVersion)
    ) {
      // 2026-07-28 answers some JSON-RPC errors with 400 / 404 (-32601 for an unknown method,
      // -32602, -32020…-32022): they are the backend's answer, not a transport failure.
      const error = jsonRpcErrorOf(text);
      if (error) throw new BackendRpcError(this.backend.name, error);
    }
    if (response.status === 401 || response.status === 403) {
      throw new BackendUnavailableError(
        this.backend.name,
        `rejected the broker's credentials (HTTP ${response.status}); check mcpBroker.servers[].headers`,
        response.status,
      );
    }
    throw new BackendUnavailableError(
      this.backend.name,
      `answered HTTP ${response.status}`,
      response.status,
    );
  }

  /** The backend error for a failed request or body read (`timeoutText` if it timed out). */
  private failure(error: unknown, scope: RequestSignal, timeoutText: string): unknown {
    if (scope.timedOut) return new BackendUnavailableError(this.backend.name, timeoutText);
    if (scope.abortedParent) {
      const reason: unknown = scope.abortedParent.reason;
      // A caller's own deadline (e.g. `AbortSignal.timeout`) counts as a timeout, as with fetch.
      if (reason instanceof Error && reason.name === 'TimeoutError') {
        return new BackendUnavailableError(this.backend.name, timeoutText);
      }
      return abortError(reason);
    }
    if (error instanceof BackendUnavailableError) return error;
    const code = (error as { code?: unknown })?.code;
    return new BackendUnavailableError(
      this.backend.name,
      `cannot reach ${redactUrl(this.backend.url)}${typeof code === 'string' ? ` (${code})` : ''}`,
    );
  }

  /** POSTs one message under `scope`; a 2xx response (body unread), or the backend error. */
  private async post(
    message: JsonRpcMessage,
    session: BackendSession,
    scope: RequestSignal,
  ): Promise<BackendResponse> {
    const response = await this.check(
      this.transport.post(this.target(session), JSON.stringify(message), scope.signal),
      session,
      scope,
    );
    if (response.status === 405) {
      response.discard();
      throw new BackendUnavailableError(this.backend.name, 'does not accept POST (HTTP 405)', 405);
    }
    return response;
  }

  /**
   * POSTs a request and resolves with its response, whether the backend answers with JSON or
   * with an SSE stream (other messages on that stream go to `onServerMessage`).
   */
  async request(
    message: JsonRpcRequest,
    session: BackendSession,
    options: BackendRequestOptions = {},
  ): Promise<BackendRequestResult> {
    const scope = requestSignal(options.signals ?? [], options.timeoutMs ?? this.defaultTimeoutMs);
    try {
      const response = await this.post(message, session, scope);
      const sessionId = response.header('mcp-session-id');
      const contentType = response.header('content-type') ?? '';
      if (!contentType.includes('text/event-stream') && !contentType.includes('application/json')) {
        response.discard();
        throw new BackendProtocolError(
          this.backend.name,
          `answered ${message.method} with unexpected content type "${contentType.slice(0, 60)}"`,
        );
      }
      return { response: await this.readResponse(response, message, scope, options), sessionId };
    } finally {
      scope.release();
    }
  }

  /**
   * Reads the response to `message` from a JSON body or an event stream. Stopping at the
   * answer leaves the rest of the stream to arrive, so the connection is reused.
   */
  private async readResponse(
    response: BackendResponse,
    message: JsonRpcRequest,
    scope: RequestSignal,
    options: BackendRequestOptions,
  ): Promise<JsonRpcResponse> {
    const isEventStream = response.isEventStream;
    try {
      for await (const item of readBackendMessages(response)) {
        if (item.type === 'malformed') {
          if (isEventStream) continue; // not JSON: not a message for us
          throw new BackendProtocolError(
            this.backend.name,
            `answered ${message.method} with invalid JSON`,
          );
        }
        const parsed = classifyJsonRpc(item.parsed.message);
        if (parsed?.kind === 'response' && parsed.message.id === message.id) return parsed.message;
        if (!isEventStream) break;
        if (parsed) options.onServerMessage?.(parsed.message);
      }
    } catch (error) {
      if (error instanceof BackendUnavailableError) throw error;
      if (error instanceof BackendMessageTooLargeError) {
        throw new BackendProtocolError(
          this.backend.name,
          `answered ${message.method} with ${error.message}`,
        );
      }
      if (scope.timedOut || scope.abortedParent)
        throw this.failure(error, scope, `${message.method} timed out`);
      throw new BackendUnavailableError(
        this.backend.name,
        'closed the response stream before answering',
      );
    }
    if (!isEventStream) {
      throw new BackendProtocolError(
        this.backend.name,
        `answered ${message.method} without a matching JSON-RPC response`,
      );
    }
    throw new BackendUnavailableError(
      this.backend.name,
      'closed the response stream before answering',
    );
  }

  /** POSTs a notification or a response; the backend answers 202 (or 200) without content. */
  async send(
    message: JsonRpcNotification | JsonRpcResponse,
    session: BackendSession,
    options: { signals?: ReadonlyArray<AbortSignal | undefined>; timeoutMs?: number } = {},
  ): Promise<void> {
    const scope = requestSignal(options.signals ?? [], options.timeoutMs ?? this.defaultTimeoutMs);
    try {
      (await this.post(message, session, scope)).discard();
    } finally {
      scope.release();
    }
  }

  /**
   * Opens the session's GET event stream. Resolves with the open response, or with
   * `'not-supported'` when the backend answers 405 (it offers no event stream). The request
   * timeout limits only the wait for the headers; the stream lives until `signal` aborts, the
   * backend ends it, or the caller closes it.
   */
  async openEventStream(
    session: BackendSession,
    signal: AbortSignal,
  ): Promise<BackendResponse | 'not-supported'> {
    const scope = requestSignal([signal], this.defaultTimeoutMs);
    let response: BackendResponse;
    try {
      response = await this.check(
        this.transport.openEventStream(this.target(session), scope.signal),
        session,
        scope,
      );
    } catch (error) {
      scope.release();
      throw error;
    }
    if (response.status === 405) {
      scope.release();
      response.discard();
      return 'not-supported';
    }
    if (!response.isEventStream) {
      scope.release();
      response.close();
      throw new BackendUnavailableError(this.backend.name, 'answered GET without an event stream');
    }
    // The stream's tie to `signal` ends with the stream, not with this call.
    scope.stopTimer();
    response.onClose(() => scope.release());
    return response;
  }

  /**
   * POSTs a request whose answer may be a long-lived event stream (2026-07-28
   * `subscriptions/listen`). Resolves with the 2xx response, body unread (the caller checks
   * that it is an event stream); the request timeout limits only the wait for the headers, and
   * the stream lives until `signal` aborts, the backend ends it, or the caller closes it.
   */
  async openPostStream(
    message: JsonRpcRequest,
    session: BackendSession,
    signal: AbortSignal,
  ): Promise<BackendResponse> {
    const scope = requestSignal([signal], this.defaultTimeoutMs);
    let response: BackendResponse;
    try {
      response = await this.post(message, session, scope);
    } catch (error) {
      scope.release();
      throw error;
    }
    scope.stopTimer();
    response.onClose(() => scope.release());
    return response;
  }

  /** Ends the session on the backend (best effort, short timeout). */
  async deleteSession(session: BackendSession): Promise<void> {
    if (session.id === undefined) return;
    const scope = requestSignal([], Math.min(this.defaultTimeoutMs, 2000));
    try {
      await this.transport.deleteSession(this.target(session), scope.signal);
    } catch {
      // The backend may already be gone; its session then expires there.
    } finally {
      scope.release();
    }
  }
}

/** The `error` member of a JSON-RPC error response in `text`, if it is one. */
function jsonRpcErrorOf(text: string): JsonRpcErrorObject | undefined {
  try {
    const parsed = classifyJsonRpc(JSON.parse(text));
    if (parsed?.kind === 'response' && 'error' in parsed.message) return parsed.message.error;
  } catch {
    // not JSON
  }
  return undefined;
}

/**
 * What a request aborted by a parent signal throws: the parent's reason when it is an error
 * (as `fetch` did; `AbortController.abort()` gives a DOMException named AbortError), else an
 * AbortError that carries the reason as its cause.
 */
function abortError(reason: unknown): Error {
  if (reason instanceof Error) return reason;
  const error = new Error('request aborted', { cause: reason });
  error.name = 'AbortError';
  return error;
}
