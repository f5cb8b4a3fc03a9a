/* The one way the MCP endpoint answers with an HTTP error (codes and versions: `protocol/`). */
import type { Request, Response } from 'express';
import { JsonRpcErrorCode, JsonRpcId, jsonRpcError } from '../protocol/jsonRpc';
import { retryAfterSeconds } from '../protocol/rateLimited';

/** The first value of a request header (Node joins most repeated headers, not all). */
export function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Answers an MCP request with an HTTP error status and a JSON-RPC error body (what MCP
 * clients expect on the transport level). The message says what to fix.
 */
export function sendTransportError(
  res: Response,
  status: number,
  code: number,
  message: string,
  id: JsonRpcId | null = null,
): void {
  res.status(status).json(jsonRpcError(id, code, message));
}

/** The broker drains before shutting down: new work is refused; the client may retry elsewhere. */
export function sendShuttingDown(res: Response, id: JsonRpcId | null = null): void {
  res.setHeader('Retry-After', '1');
  const message =
    'The MCP broker is shutting down; send the request again (on another replica, or later)';
  sendTransportError(res, 503, JsonRpcErrorCode.ServerError, message, id);
}

/**
 * A rate limit refused the request (spec §12): HTTP 429 with `Retry-After` (whole seconds) and
 * the JSON-RPC error (-32000, `data: { reason: "rate-limited", retryAfterMs }`).
 */
export function sendRateLimited(
  res: Response,
  id: JsonRpcId,
  refusal: { retryAfterMs: number; error: { code: number; message: string; data?: unknown } },
): void {
  res.setHeader('Retry-After', retryAfterSeconds(refusal.retryAfterMs));
  res
    .status(429)
    .json(jsonRpcError(id, refusal.error.code, refusal.error.message, refusal.error.data));
}
