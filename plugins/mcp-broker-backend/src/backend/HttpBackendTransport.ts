/*
 * HttpBackendTransport: the BackendTransport of MCP streamable HTTP (2025-03-26 … 2026-07-28),
 * over the plumbing of httpExchange.ts. It is where HTTP stays:
 *   - a message is one POST; its reply is the response's SSE stream or its one JSON document;
 *     a notification's or a response's 202 is an empty reply;
 *   - the route's session and protocol version become `Mcp-Session-Id` / `MCP-Protocol-Version`;
 *     a 2026-07-28 request's method, name and `x-mcp-header` arguments are mirrored into
 *     `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (the HTTP binding of that revision);
 *   - statuses become the transport's failures (backendTransport.ts): 401/403 `credentials`,
 *     404 (or a 400 that says so) for a request naming a session `session-lost`, 405
 *     `not-supported`, 404 `not-found`, other 4xx `refused`, 5xx `server-error`, a 2xx
 *     without JSON or SSE `not-mcp`, a socket error `unreachable`. A 2026-07-28 backend answers
 *     request errors with a 4xx and a JSON-RPC body: that body is the reply, not a failure.
 * Error bodies are read (at most 64 KiB kept), so the connection is reused.
 */
import {
  BackendTransportError,
  type BackendReply,
  type BackendRoute,
  type BackendStreamItem,
  type BackendTransport,
  type BackendTransportFailure,
  type OutgoingMessage,
  type SendOptions,
} from './backendTransport';
import {
  deleteBackendSession,
  HttpBackendResponse,
  openBackendEventStream,
  postToBackend,
} from './httpExchange';
import { isAbortError } from './abortError';
import { errorCode, MAX_BACKEND_MESSAGE_BYTES, readBackendMessages } from './readBackendMessages';
import { MAX_SSE_EVENT_BYTES } from './sseReader';
import { classifyJsonRpc } from '../protocol/jsonRpc';
import { parseJsonRpcMessage } from '../protocol/jsonRpcMessage';
import { ModernHeader } from '../protocol/modernEra';
import { paramHeaderValues } from '../protocol/paramHeaders';
import { encodeMcpHeaderValue } from '../protocol/requestMetadata';
import { isModernProtocolVersion } from '../protocol/versions';

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

/** How a reply's body is read: the largest message, and what an SSE event of another type is. */
interface ReplyReading {
  maxMessageBytes: number;
  otherEvents: 'skip' | 'report';
}

/** A POST's reply: messages up to the broker's limit; SSE events of other types are not traffic. */
const POST_READING: ReplyReading = {
  maxMessageBytes: MAX_BACKEND_MESSAGE_BYTES,
  otherEvents: 'skip',
};

/**
 * An event stream's reply: events up to MAX_SSE_EVENT_BYTES, and an event of another type
 * reported (its reader counts what it drops).
 */
const EVENTS_READING: ReplyReading = {
  maxMessageBytes: MAX_SSE_EVENT_BYTES,
  otherEvents: 'report',
};

/** A reply read from an HTTP response (its SSE stream or its JSON document). */
class HttpReply implements BackendReply {
  constructor(
    private readonly response: HttpBackendResponse | undefined,
    readonly sessionId: string | undefined,
    readonly single: boolean,
    /** Already read (an error body that is the backend's answer); else read from `response`. */
    private readonly items?: readonly BackendStreamItem[],
    private readonly reading: ReplyReading = POST_READING,
    private readonly signal?: AbortSignal,
  ) {}

  [Symbol.asyncIterator](): AsyncIterator<BackendStreamItem> {
    if (this.items !== undefined || this.response === undefined) {
      return toAsyncIterator(this.items ?? []);
    }
    const { maxMessageBytes, otherEvents } = this.reading;
    return readBackendMessages(this.response, maxMessageBytes, otherEvents, this.signal)[
      Symbol.asyncIterator
    ]();
  }

  discard(): void {
    this.response?.discard();
  }

  close(): void {
    this.response?.close();
  }

  onClose(listener: () => void): void {
    if (this.response === undefined) listener();
    else this.response.onClose(listener);
  }
}

function toAsyncIterator<T>(items: readonly T[]): AsyncIterator<T> {
  let next = 0;
  return {
    next: () =>
      Promise.resolve(
        next < items.length
          ? { value: items[next++], done: false }
          : ({ value: undefined, done: true } as IteratorResult<T>),
      ),
  };
}

/** The empty reply (a 202 to a notification or a response). */
const EMPTY_REPLY = new HttpReply(undefined, undefined, true, []);

/** The streamable-HTTP {@link BackendTransport}; stateless, so one instance serves everyone. */
export class HttpBackendTransport implements BackendTransport {
  /** The instance the broker uses (the keep-alive pools are shared anyway). */
  static readonly shared = new HttpBackendTransport();

  async send(
    route: BackendRoute,
    message: OutgoingMessage,
    options: SendOptions,
  ): Promise<BackendReply> {
    const target = {
      endpoint: route.endpoint,
      sessionId: route.sessionId,
      protocolVersion: route.protocolVersion,
      headers: requestHeaders(route, message, options),
    };
    let response: HttpBackendResponse;
    try {
      response = await postToBackend(target, message.text, options.signal, {
        replayable: options.replayable,
      });
    } catch (error) {
      throw unreachable(route, error);
    }
    if (!response.ok) return this.refusal(route, response, 'POST');
    const sessionId = response.header('mcp-session-id');
    const { signal } = options;
    if (response.isEventStream) {
      return new HttpReply(response, sessionId, false, undefined, POST_READING, signal);
    }
    const contentType = response.header('content-type') ?? '';
    if (contentType.includes('application/json')) {
      return new HttpReply(response, sessionId, true, undefined, POST_READING, signal);
    }
    if (message.request !== true) {
      // A notification or a response is taken with 202 and (usually) no body.
      response.discard();
      return EMPTY_REPLY;
    }
    response.discard();
    throw new BackendTransportError(
      'not-mcp',
      `answered ${message.method} with unexpected content type "${contentType.slice(0, 60)}"`,
      response.status,
    );
  }

  async openEvents(route: BackendRoute, signal: AbortSignal): Promise<BackendReply> {
    let response: HttpBackendResponse;
    try {
      response = await openBackendEventStream(route, signal);
    } catch (error) {
      throw unreachable(route, error);
    }
    if (!response.ok) return this.refusal(route, response, 'GET');
    if (!response.isEventStream) {
      response.close();
      throw new BackendTransportError('not-mcp', 'answered GET without an event stream');
    }
    return new HttpReply(response, undefined, false, undefined, EVENTS_READING, signal);
  }

  async endSession(route: BackendRoute, signal: AbortSignal): Promise<void> {
    await deleteBackendSession(route, signal);
  }

  /**
   * A non-2xx answer: the backend's JSON-RPC error for a 2026-07-28 request (the reply), or the
   * failure the status stands for (thrown).
   */
  private async refusal(
    route: BackendRoute,
    response: HttpBackendResponse,
    method: 'POST' | 'GET',
  ): Promise<BackendReply> {
    const status = response.status;
    // Read to its end (at most 64 KiB kept): the connection goes back to the pool.
    const text = await response.text().catch(() => '');
    if (status === 405) {
      const what = method === 'GET' ? 'offers no event stream' : 'does not accept POST';
      throw new BackendTransportError('not-supported', `${what} (HTTP 405)`, status);
    }
    if (status === 401 || status === 403) {
      throw new BackendTransportError(
        'credentials',
        `rejected the broker's credentials (HTTP ${status}); check mcpBroker.servers[].headers`,
        status,
      );
    }
    if (
      route.sessionId !== undefined &&
      // Servers answer an unknown session with 404 (the spec) or, like server-everything, 400.
      (status === 404 || (status === 400 && /session/i.test(text)))
    ) {
      throw new BackendTransportError(
        'session-lost',
        `session not found (HTTP ${status}); re-initializing`,
        status,
      );
    }
    if (
      status >= 400 &&
      status < 500 &&
      route.protocolVersion !== undefined &&
      isModernProtocolVersion(route.protocolVersion)
    ) {
      // 2026-07-28 answers request errors (-32601, -32602, -32020 … -32022) with a 4xx and the
      // JSON-RPC error: the backend's answer, not a transport failure.
      const parsed = parseJsonRpcMessage(text);
      const answer = parsed === undefined ? undefined : classifyJsonRpc(parsed.message);
      if (answer?.kind === 'response' && 'error' in answer.message) {
        return new HttpReply(undefined, undefined, true, [
          { type: 'message', parsed: parsed!, eventId: undefined },
        ]);
      }
    }
    let failure: BackendTransportFailure = status >= 500 ? 'server-error' : 'refused';
    if (status === 404) failure = 'not-found';
    throw new BackendTransportError(failure, `answered HTTP ${status}`, status);
  }
}

/** A request's own headers: its trace context, and the headers that mirror its body. */
function requestHeaders(
  route: BackendRoute,
  message: OutgoingMessage,
  options: SendOptions,
): Record<string, string> | undefined {
  const mirrored = mirroredHeaders(route, message, options);
  const { traceContext } = options;
  if (traceContext === undefined) return mirrored;
  return mirrored === undefined ? { ...traceContext } : Object.assign(mirrored, traceContext);
}

/** The 2026-07-28 headers that mirror a request's body (none for other revisions). */
function mirroredHeaders(
  route: BackendRoute,
  message: OutgoingMessage,
  options: SendOptions,
): Record<string, string> | undefined {
  if (
    message.method === undefined ||
    message.request !== true ||
    route.protocolVersion === undefined ||
    !isModernProtocolVersion(route.protocolVersion)
  ) {
    return undefined;
  }
  const headers: Record<string, string> = { [ModernHeader.method]: message.method };
  if (message.name !== undefined) headers[ModernHeader.name] = encodeMcpHeaderValue(message.name);
  const declarations = options.mirroredParams;
  if (declarations !== undefined && declarations.length > 0) {
    Object.assign(headers, paramHeaderValues(declarations, message.arguments));
  }
  return headers;
}

/** A request that got no answer: the abort as it is, anything else `unreachable`. */
function unreachable(route: BackendRoute, error: unknown): unknown {
  if (isAbortError(error)) return error;
  const code = errorCode(error);
  return new BackendTransportError(
    'unreachable',
    `cannot reach ${redactUrl(route.endpoint.url)}${code === undefined ? '' : ` (${code})`}`,
    undefined,
    code,
  );
}
