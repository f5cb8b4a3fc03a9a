/*
 * Official SDK clients for the three ways to reach server-everything: directly, through the
 * broker (streamable HTTP with a Backstage token) and through mcp-hub (legacy SSE, the only
 * transport it serves to clients); and the SDK v2 client pinned to 2026-07-28 (stateless
 * requests, no session) for the modern example server, directly or through the broker.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const {
  StreamableHTTPClientTransport,
} = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { SSEClientTransport } = require('@modelcontextprotocol/sdk/client/sse.js');
const {
  Client: ModernClient,
  StreamableHTTPClientTransport: ModernClientTransport,
} = require('@modelcontextprotocol/client');

/** The stateless protocol revision the modern client is pinned to. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/**
 * The SDK client hands one AbortSignal to every fetch of a transport; each POST adds a listener
 * to it, and after ~1,500 calls Node warns about a listener leak (and keeps them all). POSTs
 * therefore go without that signal (they end on their own); GET streams keep it so that
 * `close()` still ends them.
 */
function fetchWithOwnSignal(url, init = {}) {
  if ((init.method ?? 'GET') === 'GET') return fetch(url, init);
  const { signal, ...rest } = init;
  return fetch(url, rest);
}

/**
 * Connects an SDK client. `kind` is `streamable` or `sse`; `token` adds an Authorization
 * header; `capabilities` are the client capabilities (e.g. `{ elicitation: {} }`).
 */
export async function connectClient({ url, kind = 'streamable', token, capabilities = {} }) {
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const transport =
    kind === 'sse'
      ? new SSEClientTransport(new URL(url), { requestInit, fetch: fetchWithOwnSignal })
      : new StreamableHTTPClientTransport(new URL(url), { requestInit, fetch: fetchWithOwnSignal });
  const client = new Client({ name: 'broker-bench', version: '1.0.0' }, { capabilities });
  await client.connect(transport);
  return client;
}

/**
 * Connects the official SDK v2 client (`@modelcontextprotocol/client`) pinned to 2026-07-28:
 * every request is a stateless POST carrying its own metadata. `token` adds an Authorization
 * header.
 */
export async function connectModernClient({ url, token }) {
  const requestInit = token ? { headers: { Authorization: `Bearer ${token}` } } : undefined;
  const client = new ModernClient(
    { name: 'broker-bench-modern', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } },
  );
  await client.connect(
    new ModernClientTransport(new URL(url), { requestInit, fetch: fetchWithOwnSignal }),
  );
  return client;
}

/** The one listed tool whose name ends with `suffix` (each gateway prefixes differently). */
export async function findTool(client, suffix) {
  const { tools } = await client.listTools();
  const tool = tools.find(
    candidate => candidate.name === suffix || candidate.name.endsWith(`_${suffix}`),
  );
  if (!tool) throw new Error(`no tool named *${suffix} among ${tools.map(t => t.name).join(', ')}`);
  return tool.name;
}
