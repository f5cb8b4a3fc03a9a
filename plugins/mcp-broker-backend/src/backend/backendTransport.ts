/*
 * The transport seam of the backend layer: how the broker reaches a backend MCP server, apart
 * from what it says. Everything above it (BackendConnection, StreamableHttpClient,
 * BackendSessionPool, ToolCallForwarder) sends serialised JSON-RPC through a BackendTransport
 * and reads the answer as a BackendResponse; HttpBackendTransport (streamable HTTP, MCP
 * 2025-03-26 … 2025-11-25) is the implementation today, and a transport for another protocol
 * era (e.g. stateless MCP 2026-07-28 backends) goes next to it. Failures: the promises reject
 * with the transport's errors (socket errors, aborts); backendErrors.ts maps them.
 */
import type { ParsedJsonRpcMessage } from '../protocol/jsonRpcMessage';

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

/** Where one request goes: the backend and, once there is one, the session's headers. */
export interface BackendTarget {
  endpoint: BackendEndpoint;
  /** Sent as `Mcp-Session-Id` when defined. */
  sessionId?: string;
  /** Sent as `Mcp-Protocol-Version` when defined. */
  protocolVersion?: string;
  /** Further per-request headers (2026-07-28: `Mcp-Method`, `Mcp-Name`); lower-case names. */
  headers?: Record<string, string>;
}

/** One message read from a backend response stream (or a line that was not one). */
export type BackendStreamItem =
  | { type: 'message'; parsed: ParsedJsonRpcMessage; eventId: string | undefined }
  | { type: 'malformed'; text: string };

/** A backend's answer to one request: status, headers, and the body still to be read. */
export interface BackendResponse {
  /** The HTTP status code. */
  readonly status: number;
  /** True for a 2xx status. */
  readonly ok: boolean;
  /** A response header (first value), by lower-case name. */
  header(name: string): string | undefined;
  /** True when the body is a server-sent-events stream. */
  readonly isEventStream: boolean;
  /**
   * The body's bytes, in order; the iteration throws when the connection breaks. Leaving the
   * loop early does not close the connection: call `discard` or `close`.
   */
  readonly body: AsyncIterable<Buffer>;
  /** Throws the rest of the body away so that the connection can be reused. */
  discard(graceMs?: number): void;
  /** Reads the body as UTF-8 text, keeping at most `maxBytes`. */
  text(maxBytes?: number): Promise<string>;
  /** Closes the connection without reading further. */
  close(): void;
  /** Calls `listener` once the body has ended or the connection closed. */
  onClose(listener: () => void): void;
}

/**
 * How the broker reaches backends: one small interface per protocol era, the way the MCP SDK
 * puts a `Transport` under its `Protocol`. `target` names the backend and, once there is one,
 * the session; the body is an already serialised JSON-RPC message.
 */
export interface BackendTransport {
  /**
   * Sends one message. `replayable: false` (a `tools/call`, which may have effects) is never
   * sent twice, even when a reused connection turns out closed.
   */
  post(
    target: BackendTarget,
    body: string,
    signal: AbortSignal,
    options?: { replayable?: boolean },
  ): Promise<BackendResponse>;
  /**
   * Opens the session's event stream; resolves once the headers arrived, whatever the status.
   * The stream lives until `signal` aborts or either side closes it.
   */
  openEventStream(target: BackendTarget, signal: AbortSignal): Promise<BackendResponse>;
  /** Ends the session at the backend (nothing without a session id). */
  deleteSession(target: BackendTarget, signal: AbortSignal): Promise<void>;
}
