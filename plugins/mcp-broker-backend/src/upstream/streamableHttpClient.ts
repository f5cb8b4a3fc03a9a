/*
 * The client half of MCP streamable HTTP, spoken directly with fetch so the broker controls
 * every detail the SDK client hides: which POST stream a message arrived on, 404/405 handling,
 * the GET stream's lifetime, and ids of any JSON type. One instance per backend; it holds no
 * session state itself (the caller passes the session id and protocol version).
 */
import type { BrokerBackend } from '../broker/types';
import {
  classifyJsonRpc,
  JsonRpcId,
  JsonRpcMessage,
  JsonRpcNotification,
  JsonRpcRequest,
  JsonRpcResponse,
} from '../broker/jsonRpc';
import { BackendSessionLostError, BackendUnavailableError } from './errors';
import { readSseStream } from './sseReader';

/** The broker's session with a backend, as far as HTTP is concerned. */
export interface UpstreamSession {
  readonly id?: string;
  readonly protocolVersion?: string;
}

/** Options of a single backend request. */
export interface UpstreamRequestOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Called for every other message the backend sends on this request's stream. */
  onServerMessage?: (message: JsonRpcMessage) => void;
}

/** The result of a POSTed request: the matching response and the session id the backend set. */
export interface UpstreamRequestResult {
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

function isTimeout(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

/** Speaks streamable HTTP to one backend with the broker's own credentials. */
export class StreamableHttpClient {
  constructor(
    private readonly backend: BrokerBackend,
    private readonly defaultTimeoutMs: number,
  ) {}

  private headers(session: UpstreamSession, accept: string): Record<string, string> {
    const headers: Record<string, string> = { ...this.backend.headers, accept };
    if (session.id !== undefined) headers['mcp-session-id'] = session.id;
    if (session.protocolVersion !== undefined) {
      headers['mcp-protocol-version'] = session.protocolVersion;
    }
    return headers;
  }

  private signalFor(options: { signal?: AbortSignal; timeoutMs?: number }): AbortSignal {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? this.defaultTimeoutMs);
    return options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  }

  private async fetch(url: string, init: RequestInit, session: UpstreamSession): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(url, init);
    } catch (error) {
      if (isTimeout(error)) throw new BackendUnavailableError(this.backend.name, 'timed out');
      if (error instanceof Error && error.name === 'AbortError') throw error;
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      throw new BackendUnavailableError(
        this.backend.name,
        `cannot reach ${redactUrl(url)}${cause ? ` (${cause})` : ''}`,
      );
    }
    if (response.ok || response.status === 405) return response;
    const text = await response.text().catch(() => '');
    if (session.id !== undefined) {
      // Servers answer an unknown session with 404 (the spec) or, like server-everything, 400.
      if (response.status === 404 || (response.status === 400 && /session/i.test(text))) {
        throw new BackendSessionLostError(this.backend.name, response.status);
      }
    }
    if (response.status === 401 || response.status === 403) {
      throw new BackendUnavailableError(
        this.backend.name,
        `rejected the broker's credentials (HTTP ${response.status}); check mcpBroker.servers[].headers`,
        response.status,
      );
    }
    throw new BackendUnavailableError(this.backend.name, `answered HTTP ${response.status}`, response.status);
  }

  /**
   * POSTs a request and resolves with its response, whether the backend answers with JSON or
   * with an SSE stream (other messages on that stream go to `onServerMessage`).
   */
  async request(
    message: JsonRpcRequest,
    session: UpstreamSession,
    options: UpstreamRequestOptions = {},
  ): Promise<UpstreamRequestResult> {
    const signal = this.signalFor(options);
    const response = await this.fetch(
      this.backend.url,
      {
        method: 'POST',
        headers: {
          ...this.headers(session, 'application/json, text/event-stream'),
          'content-type': 'application/json',
        },
        body: JSON.stringify(message),
        signal,
      },
      session,
    );
    if (response.status === 405) {
      throw new BackendUnavailableError(this.backend.name, 'does not accept POST (HTTP 405)', 405);
    }
    const sessionId = response.headers.get('mcp-session-id') ?? undefined;
    const contentType = response.headers.get('content-type') ?? '';
    try {
      if (contentType.includes('text/event-stream') && response.body) {
        const found = await this.readResponseFromStream(response.body, message.id, signal, options);
        return { response: found, sessionId };
      }
      if (contentType.includes('application/json')) {
        const parsed = classifyJsonRpc(await response.json());
        if (parsed?.kind === 'response' && parsed.message.id === message.id) {
          return { response: parsed.message, sessionId };
        }
        throw new BackendUnavailableError(this.backend.name, `answered ${message.method} without a matching JSON-RPC response`);
      }
    } catch (error) {
      if (isTimeout(error) || (signal.aborted && isTimeout(signal.reason))) {
        throw new BackendUnavailableError(this.backend.name, `${message.method} timed out`);
      }
      if (error instanceof SyntaxError) {
        throw new BackendUnavailableError(this.backend.name, `answered ${message.method} with invalid JSON`);
      }
      throw error;
    }
    throw new BackendUnavailableError(
      this.backend.name,
      `answered ${message.method} with unexpected content type "${contentType.slice(0, 60)}"`,
    );
  }

  private async readResponseFromStream(
    body: ReadableStream<Uint8Array>,
    id: JsonRpcId,
    signal: AbortSignal,
    options: UpstreamRequestOptions,
  ): Promise<JsonRpcResponse> {
    let found: JsonRpcResponse | undefined;
    const done = new AbortController();
    await readSseStream(
      body,
      {
        onEvent: event => {
          if (found) return;
          let parsed;
          try {
            parsed = classifyJsonRpc(JSON.parse(event.data));
          } catch {
            return; // not JSON: not a message for us
          }
          if (parsed?.kind === 'response' && parsed.message.id === id) {
            found = parsed.message;
            done.abort();
          } else if (parsed) {
            options.onServerMessage?.(parsed.message);
          }
        },
      },
      AbortSignal.any([signal, done.signal]),
    );
    if (found) return found;
    if (signal.aborted) throw signal.reason;
    throw new BackendUnavailableError(this.backend.name, 'closed the response stream before answering');
  }

  /** POSTs a notification or a response; the backend answers 202 (or 200) without content. */
  async send(
    message: JsonRpcNotification | JsonRpcResponse,
    session: UpstreamSession,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<void> {
    const response = await this.fetch(
      this.backend.url,
      {
        method: 'POST',
        headers: {
          ...this.headers(session, 'application/json, text/event-stream'),
          'content-type': 'application/json',
        },
        body: JSON.stringify(message),
        signal: this.signalFor(options),
      },
      session,
    );
    await response.body?.cancel().catch(() => {});
    if (response.status === 405) {
      throw new BackendUnavailableError(this.backend.name, 'does not accept POST (HTTP 405)', 405);
    }
  }

  /**
   * Opens the session's GET event stream. Resolves with the open response, or with
   * `'not-supported'` when the backend answers 405 (it offers no event stream).
   */
  async openEventStream(session: UpstreamSession, signal: AbortSignal): Promise<Response | 'not-supported'> {
    const connectTimeout = AbortSignal.timeout(this.defaultTimeoutMs);
    // The timeout guards only the wait for headers; the stream itself lives until `signal`.
    const headersSignal = new AbortController();
    const onTimeout = () => headersSignal.abort(connectTimeout.reason);
    connectTimeout.addEventListener('abort', onTimeout, { once: true });
    try {
      const response = await this.fetch(
        this.backend.url,
        {
          method: 'GET',
          headers: this.headers(session, 'text/event-stream'),
          signal: AbortSignal.any([signal, headersSignal.signal]),
        },
        session,
      );
      if (response.status === 405) {
        await response.body?.cancel().catch(() => {});
        return 'not-supported';
      }
      const contentType = response.headers.get('content-type') ?? '';
      if (!contentType.includes('text/event-stream') || !response.body) {
        await response.body?.cancel().catch(() => {});
        throw new BackendUnavailableError(this.backend.name, 'answered GET without an event stream');
      }
      return response;
    } finally {
      connectTimeout.removeEventListener('abort', onTimeout);
    }
  }

  /** Ends the session on the backend (best effort, short timeout). */
  async deleteSession(session: UpstreamSession): Promise<void> {
    if (session.id === undefined) return;
    try {
      const response = await fetch(this.backend.url, {
        method: 'DELETE',
        headers: this.headers(session, 'application/json'),
        signal: AbortSignal.timeout(Math.min(this.defaultTimeoutMs, 2000)),
      });
      await response.body?.cancel().catch(() => {});
    } catch {
      // The backend may already be gone; its session then expires there.
    }
  }
}
