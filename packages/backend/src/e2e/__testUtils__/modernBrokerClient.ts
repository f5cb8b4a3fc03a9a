/*
 * Helpers for the broker's end-to-end tests of 2026-07-28 (stateless) clients: the official SDK
 * v2 client pinned to 2026-07-28, and raw requests (`tools/call`, `prompts/get`, ...) with the
 * headers and `_meta` such a client sends (for the statuses and shapes the SDK hides).
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernClientTransport,
} from '@modelcontextprotocol/client';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The stateless protocol revision the SDK v2 client is pinned to in these tests. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/**
 * Connects the official SDK v2 client, pinned to 2026-07-28, to the broker with a token; `fetch`
 * sends its requests (default: the global fetch); `path` is the MCP endpoint (default the main one).
 */
export async function connectModernClient(
  baseUrl: string,
  token: string,
  capabilities: Record<string, unknown> = {},
  fetch?: FetchLike,
  path = '/api/mcp-broker/mcp',
): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'broker-modern-e2e', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } },
  );
  await client.connect(
    new ModernClientTransport(new URL(`${baseUrl}${path}`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch,
    }),
  );
  return client;
}

/**
 * One 2026-07-28 `tools/call` with raw HTTP (the headers and `_meta` a modern client sends, plus
 * `headers`, e.g. `Mcp-Param-*`): the HTTP status, every JSON-RPC message of the answer (JSON or
 * SSE), and the response.
 */
export function modernToolCall(
  baseUrl: string,
  token: string,
  id: number,
  params: Record<string, unknown>,
  meta: Record<string, unknown> = {},
  headers: Record<string, string> = {},
) {
  return modernRequest(baseUrl, token, id, 'tools/call', params, meta, headers);
}

/**
 * A 2026-07-28 request body: `params` with the per-request `_meta` envelope a modern client
 * sends (protocol version, no capabilities, client info), plus `meta`.
 */
export function modernBody(
  id: number,
  method: string,
  params: Record<string, unknown> = {},
  meta: Record<string, unknown> = {},
) {
  return {
    jsonrpc: '2.0',
    id,
    method,
    params: {
      ...params,
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 'raw-e2e', version: '1.0.0' },
        ...meta,
      },
    },
  };
}

/** The params member a method's `Mcp-Name` header mirrors. */
const NAME_SOURCE: Record<string, string> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
};

/**
 * One 2026-07-28 request of any method with raw HTTP, plus `headers` (e.g. `Mcp-Param-*`); see
 * {@link modernToolCall}.
 */
export async function modernRequest(
  baseUrl: string,
  token: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  meta: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Promise<{
  status: number;
  messages: Array<Record<string, any>>;
  response: Record<string, any>;
}> {
  const res = await postModernRequest(baseUrl, token, id, method, params, { meta, headers });
  const text = await res.text();
  const messages = res.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter(line => line.startsWith('data: '))
        .map(line => JSON.parse(line.slice(6)))
    : [JSON.parse(text)];
  return { status: res.status, messages, response: messages.find(m => m.id === id)! };
}

/**
 * Sends one 2026-07-28 request as {@link modernRequest} does and returns the response unread:
 * to read its stream while it lasts, or to close the request with `signal` (how a 2026-07-28
 * client cancels).
 */
export function postModernRequest(
  baseUrl: string,
  token: string,
  id: number,
  method: string,
  params: Record<string, unknown>,
  options: {
    meta?: Record<string, unknown>;
    headers?: Record<string, string>;
    signal?: AbortSignal;
  } = {},
): Promise<Response> {
  const source = NAME_SOURCE[method];
  return fetch(`${baseUrl}/api/mcp-broker/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      'mcp-method': method,
      ...(source === undefined ? {} : { 'mcp-name': String(params[source]) }),
      ...options.headers,
    },
    body: JSON.stringify(modernBody(id, method, params, options.meta)),
    signal: options.signal,
  });
}
