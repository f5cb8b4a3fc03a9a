/*
 * The transport seam of the backend layer, drawn as the MCP SDK draws it: a transport moves whole
 * JSON-RPC messages to a backend MCP server and hands back the messages the backend sends in
 * answer; it knows nothing of handshakes, envelopes, ids or what a message means. What each
 * protocol era says over it (the legacy handshake and its sessions, the 2026-07-28 envelope) is
 * a channel's business (LegacyChannel.ts, ModernChannel.ts), and so is turning the failures
 * below into the one error vocabulary clients see (backendErrors.ts).
 *
 * HttpBackendTransport (streamable HTTP) is the implementation; a stdio or WebSocket transport
 * would implement the same three calls and be invisible above this file. Nothing of its medium
 * crosses the seam: a reply is a sequence of messages, a refusal a BackendTransportError whose
 * `failure` says what kind of refusal it was (its `detail` may name the medium's own words,
 * e.g. an HTTP status, for people to read).
 */
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';
import type { ParamHeaderDeclaration } from '../protocol/paramHeaders';

/** Where a backend lives and the broker's own credentials for it. */
export interface BackendEndpoint {
  /** The backend's configured name (`[a-z0-9-]+`). */
  name: string;
  /** Its streamable-HTTP endpoint. */
  url: string;
  /** Headers the broker sends to it (its credentials); never the client's. */
  headers: Record<string, string>;
}

/**
 * The endpoint of one person's request to `endpoint`'s backend (spec §11.1): the same URL without
 * its user info — user info is the broker's own credential (sent as Basic authorization), and a
 * person's request carries only what is theirs — with `headers` (the person's header set) in
 * place of the broker's.
 */
export function personalEndpointOf(
  endpoint: BackendEndpoint,
  headers: Readonly<Record<string, string>>,
): BackendEndpoint {
  const url = new URL(endpoint.url);
  url.username = '';
  url.password = '';
  return { name: endpoint.name, url: url.toString(), headers: { ...headers } };
}

/** Where one message goes: the backend and, in the session era, the session it belongs to. */
export interface BackendRoute {
  readonly endpoint: BackendEndpoint;
  /** The backend's session (2025-11-25 era); undefined outside a session. */
  readonly sessionId?: string;
  /** The protocol version the message is spoken in (the session's, or 2026-07-28). */
  readonly protocolVersion?: string;
}

/** One message on its way to a backend. */
export interface OutgoingMessage {
  /** The message as JSON text (ids spliced in as their raw tokens where the broker answers). */
  readonly text: string;
  /** The method of a request or notification; undefined for responses. */
  readonly method?: string;
  /** True for a request (the backend answers it); false or absent otherwise. */
  readonly request?: boolean;
  /**
   * What a 2026-07-28 request's name member says (`params.name` or `params.uri`): transports
   * that mirror the body into their own metadata (HTTP's `Mcp-Name`) take it from here.
   */
  readonly name?: string;
  /** A request's arguments (`params.arguments` of a `tools/call`), for `mirroredParams`. */
  readonly arguments?: unknown;
}

/** How one message is sent. */
export interface SendOptions {
  /** Aborts the exchange (before the answer: the send rejects; later: the reply's reading). */
  readonly signal: AbortSignal;
  /**
   * False for a message that must never be delivered twice (a `tools/call`, which may have
   * effects): a transport that finds its connection closed under it fails instead of resending.
   */
  readonly replayable?: boolean;
  /** The tool's `x-mcp-header` declarations, whose arguments a 2026-07-28 call mirrors. */
  readonly mirroredParams?: readonly ParamHeaderDeclaration[];
  /**
   * W3C trace context of the request (`traceparent`, `tracestate`: the broker's span for it),
   * carried as the medium carries it (HTTP: as headers of those names).
   */
  readonly traceContext?: Readonly<Record<string, string>>;
}

/** One message read from a backend (or a piece of its answer that was not one). */
export type BackendStreamItem =
  | { type: 'message'; parsed: ParsedJsonRpcMessage; eventId: string | undefined }
  | {
      type: 'malformed';
      text: string;
      /** Why it is not a message, when the transport knows better than "not JSON-RPC". */
      reason?: string;
    };

/**
 * What a backend sent back for one message: the messages, in order, as they arrive. Iterate it
 * once; the iteration throws a BackendTransportError (`broken`, `too-large`) when the
 * exchange breaks, or the signal's abort. Stopping early leaves the rest to `discard`/`close`.
 */
export interface BackendReply extends AsyncIterable<BackendStreamItem> {
  /** The session the backend opened in this exchange (an `initialize`), if any. */
  readonly sessionId: string | undefined;
  /** True when the backend answered with exactly one message, not a stream of them. */
  readonly single: boolean;
  /** Drops what has not been read yet, keeping the connection for reuse where possible. */
  discard(): void;
  /** Ends the exchange at once (a 2026-07-28 call is cancelled by closing its stream). */
  close(): void;
  /** Calls `listener` once the exchange has ended, for whatever reason. */
  onClose(listener: () => void): void;
}

/**
 * How a transport refused or lost an exchange (the medium's words are in `detail`):
 * - `unreachable`: no connection (refused, reset, name unknown) before any answer;
 * - `credentials`: the backend refused the broker's credentials;
 * - `session-lost`: the backend does not know the session the message named;
 * - `not-supported`: the backend does not take this kind of exchange at all (e.g. no event
 *   stream, or no POST);
 * - `not-found`: nothing serves MCP at that address (outside a session);
 * - `refused`: the backend refused the message as a request (bad request, unknown path …);
 * - `server-error`: the backend failed to answer it;
 * - `not-mcp`: something answered, but not with MCP messages;
 * - `broken`: the exchange broke after it began;
 * - `too-large`: one message was larger than the transport's limit.
 */
export type BackendTransportFailure =
  | 'unreachable'
  | 'credentials'
  | 'session-lost'
  | 'not-supported'
  | 'not-found'
  | 'refused'
  | 'server-error'
  | 'not-mcp'
  | 'broken'
  | 'too-large';

/** A transport's refusal or loss of an exchange; see {@link BackendTransportFailure}. */
export class BackendTransportError extends Error {
  readonly name = 'BackendTransportError';

  constructor(
    readonly failure: BackendTransportFailure,
    /** What happened, in the medium's words (e.g. `answered HTTP 500`, `ECONNREFUSED`). */
    readonly detail: string,
    /** The medium's status code, where it has one (shown to people, never branched on). */
    readonly status?: number,
    /** The underlying error's code (`ECONNREFUSED`, …), where there is one. */
    readonly code?: string,
  ) {
    super(detail);
  }
}

/**
 * How the broker reaches backends (one small interface, as the SDK's `Transport` under its
 * `Protocol`). Rejections are BackendTransportError or the signal's abort.
 */
export interface BackendTransport {
  /**
   * Sends one message and resolves with the backend's reply once it begins (a notification or
   * response is answered with an empty reply). A 2026-07-28 backend's JSON-RPC error answering
   * a request is a reply, whatever the medium's status said.
   */
  send(route: BackendRoute, message: OutgoingMessage, options: SendOptions): Promise<BackendReply>;
  /**
   * Opens the session's stream of server-initiated messages (2025-11-25 `GET`). Rejects with
   * `not-supported` when the backend offers none. The reply lives until `signal` aborts or
   * either side ends it.
   */
  openEvents(route: BackendRoute, signal: AbortSignal): Promise<BackendReply>;
  /** Ends the session at the backend (nothing without a session id). */
  endSession(route: BackendRoute, signal: AbortSignal): Promise<void>;
}
