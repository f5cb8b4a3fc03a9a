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
  /** A backend closed the connection or the stream before answering (SDK `ConnectionClosed`). */
  ConnectionClosed: -32000,
  /** A request exceeded its time limit (SDK `RequestTimeout`). */
  RequestTimeout: -32001,
  /** The client's `Mcp-Session-Id` is unknown, ended, or another principal's (with HTTP 404). */
  SessionNotFound: -32001,
  /** Sent to a backend whose `elicitation/create` the client did not answer in time. */
  ElicitationExpired: -32001,
} as const;

/** True for a plain (non-array, non-null) object. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a legal JSON-RPC id (a string or a finite number). */
export function isJsonRpcId(value: unknown): value is JsonRpcId {
  return typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value));
}

/** Classifies a parsed JSON value as a JSON-RPC message, or undefined when it is not one. */
export function classifyJsonRpc(
  value: unknown,
):
  | { kind: 'request'; message: JsonRpcRequest }
  | { kind: 'notification'; message: JsonRpcNotification }
  | { kind: 'response'; message: JsonRpcResponse }
  | undefined {
  if (!isPlainObject(value) || value.jsonrpc !== '2.0') return undefined;
  if (value.params !== undefined && !isPlainObject(value.params)) return undefined;
  if (typeof value.method === 'string') {
    if (!('id' in value)) {
      return { kind: 'notification', message: value as unknown as JsonRpcNotification };
    }
    if (isJsonRpcId(value.id)) {
      return { kind: 'request', message: value as unknown as JsonRpcRequest };
    }
    return undefined;
  }
  if ('result' in value && isJsonRpcId(value.id) && isPlainObject(value.result)) {
    return { kind: 'response', message: value as unknown as JsonRpcResponse };
  }
  if (
    'error' in value &&
    (isJsonRpcId(value.id) || value.id === null) &&
    isPlainObject(value.error) &&
    typeof value.error.code === 'number' &&
    typeof value.error.message === 'string'
  ) {
    return { kind: 'response', message: value as unknown as JsonRpcResponse };
  }
  return undefined;
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
