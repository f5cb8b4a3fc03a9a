/*
 * One raw JSON-RPC POST to the broker's MCP endpoint, as a client without the SDK would send it:
 * for end-to-end tests that assert status codes, headers and streams the SDK hides.
 */

/** A 2025-11-25 `initialize` request (id 1) with no capabilities. */
export const LEGACY_INITIALIZE_REQUEST = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-11-25',
    capabilities: {},
    clientInfo: { name: 'e2e', version: '1' },
  },
} as const;

/** Options of {@link mcpRawPost}. */
export interface McpRawPostOptions {
  /** Sent as `Mcp-Session-Id` when given. */
  sessionId?: string;
  /** Sent as `MCP-Protocol-Version` when given. */
  protocolVersion?: string;
  signal?: AbortSignal;
}

/** POSTs `body` (JSON-encoded) to `mcpUrl` with `token` as the bearer token. */
export function mcpRawPost(
  mcpUrl: string,
  token: string,
  body: unknown,
  options: McpRawPostOptions = {},
): Promise<Response> {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...(options.sessionId !== undefined && { 'mcp-session-id': options.sessionId }),
      ...(options.protocolVersion !== undefined && {
        'mcp-protocol-version': options.protocolVersion,
      }),
    },
    body: JSON.stringify(body),
    signal: options.signal,
  });
}
