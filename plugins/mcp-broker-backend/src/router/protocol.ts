/* The one way the MCP endpoint answers with an HTTP error (codes and versions: `protocol/`). */
import type { Request, Response } from 'express';
import { JsonRpcErrorCode, JsonRpcId, jsonRpcError } from '../protocol/jsonRpc';

/** The first value of a request header (Node joins most repeated headers, not all). */
export function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Seconds a client should wait before retrying a request answered 503 because something the
 * broker needs (its database, the permission backend) is unavailable for a moment.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * Answers an MCP request with an HTTP error status and a JSON-RPC error body (what MCP
 * clients expect on the transport level). The message says what to fix. Every 503 says when
 * to retry (`Retry-After`; {@link UNAVAILABLE_RETRY_AFTER_SECONDS} unless set already).
 */
export function sendTransportError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
): void {
  if (status === 503 && !res.hasHeader('Retry-After')) {
    res.setHeader('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  }
  res.status(status).json(jsonRpcError(id, code, message));
}

/** The broker drains before shutting down: new work is refused; the client may retry elsewhere. */
export function sendShuttingDown(res: Response, id: JsonRpcId | null = null): void {
  res.setHeader('Retry-After', '1');
  const message =
    'The MCP broker is shutting down; send the request again (on another replica, or later)';
  sendTransportError(res, 503, JsonRpcErrorCode.ServerError, message, id);
}
