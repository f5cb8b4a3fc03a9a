/*
 * JSON-RPC 2.0 shapes, ids and error codes as the broker sees them on the wire (protocol layer:
 * no HTTP here). The broker parses traffic itself
 * instead of with the SDK's schemas because those reject legal ids (floats such as 7.5) that
 * the broker must pass through unchanged.
 */

/** A JSON-RPC id: string or number (integer or float), kept with its JSON type. */
export type JsonRpcId = string | number;

/** A JSON-RPC request (has an id and a method). */
export interface JsonRpcRequest {
  jsonrpc: '2.0';
  id: JsonRpcId;
  method: string;
  params?: Record<string, unknown>;
}

/** A JSON-RPC notification (a method, no id). */
export interface JsonRpcNotification {
  jsonrpc: '2.0';
  method: string;
  params?: Record<string, unknown>;
}

/** The error member of a JSON-RPC error response. */
export interface JsonRpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC response: a result or an error for an id (`null` when the id was unreadable). */
export type JsonRpcResponse =
  | { jsonrpc: '2.0'; id: JsonRpcId; result: Record<string, unknown> }
  | { jsonrpc: '2.0'; id: JsonRpcId | null; error: JsonRpcErrorObject };

/** Any JSON-RPC message. */
export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse;

/**
 * The JSON-RPC and MCP error codes the broker uses, on both sides: every code the broker sends
 * comes from here. The MCP-specific ones follow the SDK's `ErrorCode` (-32000 connection closed,
 * -32001 request timeout); several names share a number where MCP gives one code two uses.
 */
export const JsonRpcErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** Used by MCP servers for "session not found" and similar transport-level errors. */
  ServerError: -32000,
  /** No or a refused token (with HTTP 401 and a `WWW-Authenticate` challenge). */
  Unauthorized: -32000,
  /** A backend closed the connection or the stream before answering (SDK `ConnectionClosed`). */
  ConnectionClosed: -32000,
  /** A request exceeded its time limit (SDK `RequestTimeout`). */
  RequestTimeout: -32001,
  /** The client's `Mcp-Session-Id` is unknown, ended, or another principal's (with HTTP 404). */
  SessionNotFound: -32001,
  /** Sent to a backend whose `elicitation/create` the client did not answer in time. */
  ElicitationExpired: -32001,
  /**
   * A rate limit (`mcpBroker.rateLimits`) refused the request; `data: { reason: "rate-limited",
   * retryAfterMs }` (HTTP 429 with `Retry-After` where the answer is plain HTTP).
   */
  RateLimited: -32000,
  /** 2026-07-28: the HTTP headers disagree with the body, or one is missing (HTTP 400). */
  HeaderMismatch: -32020,
  /** 2026-07-28: the request needs a client capability it did not declare (HTTP 400). */
  MissingRequiredClientCapability: -32021,
  /** 2026-07-28: the request's protocol version is not served here (HTTP 400). */
  UnsupportedProtocolVersion: -32022,
} as const;

/** True for a plain (non-array, non-null) object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a legal JSON-RPC id (a string or a finite number). */
export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** How a message is to be treated, by the members JSON-RPC 2.0 says each kind must have. */
export type JsonRpcMessageKind = 'request' | 'notification' | 'response' | 'invalid';

/**
 * The one JSON-RPC classification, by the envelope alone: `jsonrpc: "2.0"`; a method with a legal
 * id is a request, a method without an `id` member a notification; exactly one of `result` and
 * `error` with a legal id (or `null`) a response. Members' contents are not looked at, so traffic
 * the broker only relays (a backend's result) passes whatever it holds; {@link classifyJsonRpc}
 * adds the shape checks for messages the broker reads itself.
 */
export function jsonRpcMessageKind(message: unknown): JsonRpcMessageKind {
  if (!isPlainObject(message) || message.jsonrpc !== '2.0') return 'invalid';
  if (typeof message.method === 'string') {
    if (!('id' in message)) return 'notification';
    return isJsonRpcId(message.id) ? 'request' : 'invalid';
  }
  if (
    'result' in message !== 'error' in message &&
    (isJsonRpcId(message.id) || message.id === null)
  ) {
    return 'response';
  }
  return 'invalid';
}

/**
 * Classifies a parsed JSON value as a JSON-RPC message the broker reads itself, or undefined when
 * it is not one: {@link jsonRpcMessageKind}, plus `params` an object when present, a result an
 * object for a non-null id, and an error with a numeric `code` and a string `message`.
 */
export function classifyJsonRpc(
  value: unknown,
):
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | undefined {
  const kind = jsonRpcMessageKind(value);
  if (kind === 'invalid') return undefined;
  const message = value as Record<string, unknown>;
  if (message.params !== undefined && !isPlainObject(message.params)) return undefined;
  if (kind === 'request') return { kind, message: message as unknown as JsonRpcRequest };
  if (kind === 'notification') {
    return { kind, message: message as unknown as JsonRpcNotification };
  }
  const wellFormed =
    'result' in message
      ? message.id !== null && isPlainObject(message.result)
      : isPlainObject(message.error) &&
        typeof message.error.code === 'number' &&
        typeof message.error.message === 'string';
  return wellFormed ? { kind, message: message as unknown as JsonRpcResponse } : undefined;
}

/** Builds a JSON-RPC error response. */
export function jsonRpcError(
  id: JsonRpcId | null,
  code: number,
  message: string,
  data?: unknown,
): JsonRpcResponse {
  return {
    jsonrpc: '2.0',
    id,
    error: data === undefined ? { code, message } : { code, message, data },
  };
}

/** Builds a JSON-RPC result response. */
export function jsonRpcResult(id: JsonRpcId, result: Record<string, unknown>): JsonRpcResponse {
  return { jsonrpc: '2.0', id, result };
}

/** The `_meta.progressToken` of request params, if any. */
export function progressTokenOf(params: Record<string, unknown>): string | number | undefined {
  const meta = params._meta;
  if (!isPlainObject(meta)) return undefined;
  const token = meta.progressToken;
  return typeof token === 'string' || typeof token === 'number' ? token : undefined;
}
