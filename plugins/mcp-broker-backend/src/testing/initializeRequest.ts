/*
 * The JSON-RPC `initialize` request the broker's tests send with raw HTTP (no SDK client): a
 * 2025-11-25 client with the given params merged over a minimal default.
 */
/** An `initialize` request; `params` replace the defaults key by key. */
export function initializeRequest(params: Record<string, unknown> = {}, id: string | number = 1) {
  return {
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: {
      protocolVersion: '2025-11-25',
      capabilities: {},
      clientInfo: { name: 't', version: '1' },
      ...params,
    },
  };
}
