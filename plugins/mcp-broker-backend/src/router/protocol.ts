/* Client-side protocol constants and the one way the MCP endpoint answers with an HTTP error. */
import type { Response } from 'express';
import { JsonRpcId, jsonRpcError } from '../broker/jsonRpc';

/** Protocol versions clients may negotiate, newest first (the first is offered by default). */
export const CLIENT_PROTOCOL_VERSIONS = ['2025-11-25', '2025-06-18', '2025-03-26'];

/** MCP's "session not found" style error code, used with HTTP 404. */
export const SESSION_ERROR_CODE = -32001;

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
