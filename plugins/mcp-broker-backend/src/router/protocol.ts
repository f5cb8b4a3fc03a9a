/* The one way the MCP endpoint answers with an HTTP error (codes and versions: `protocol/`). */
import type { Response } from 'express';
import { JsonRpcId, jsonRpcError } from '../protocol/jsonRpc';

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
