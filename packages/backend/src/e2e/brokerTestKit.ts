/*
 * Helpers for the broker's end-to-end tests: waiting, and official SDK clients connected to the
 * broker in the real backend process (the MCP servers come from @internal/example-mcp-server and
 * @internal/test-mcp-backends).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernClientTransport,
} from '@modelcontextprotocol/client';

/** The stateless protocol revision the SDK v2 client is pinned to in these tests. */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/** Waits until `check` returns a truthy value, polling every 50 ms. */
export async function waitFor<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 50));
  }
}

/** Sleeps (to show that something does NOT happen within a window). */
export const sleep = (ms: number) => new Promise(resolve => setTimeout(resolve, ms));

/** An SDK client connected to the broker, recording the notifications it receives. */
export interface BrokerClient {
  client: Client;
  transport: StreamableHTTPClientTransport;
  notifications: string[];
  close(): Promise<void>;
}

/** Connects the official SDK client (streamable HTTP) to the broker with a Backstage token. */
export async function connectBrokerClient(baseUrl: string, token: string): Promise<BrokerClient> {
  const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp-broker/mcp`), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'broker-e2e', version: '1.0.0' }, { capabilities: {} });
  const notifications: string[] = [];
  client.fallbackNotificationHandler = async notification => {
    notifications.push(notification.method);
  };
  await client.connect(transport);
  return {
    client,
    transport,
    notifications,
    async close() {
      await client.close().catch(() => {});
    },
  };
}

// eslint-disable-next-line no-control-regex -- ESC starts the log's colour codes
const ANSI = /\u001b\[[0-9;]*m/g;

/**
 * The tool-call audit events of the backend's output (development log format:
 * `... mcp-broker.tool-call ... meta={json} status="..."`), as their meta plus status.
 */
export function toolCallAuditLines(output: string): Array<Record<string, any>> {
  return output
    .replace(ANSI, '')
    .split('\n')
    .filter(line => line.includes(' mcp-broker.tool-call '))
    .map(line => ({
      ...JSON.parse(/ meta=(\{.*?\}) status=/.exec(line)![1]),
      status: JSON.parse(/ status=("[a-z]+")/.exec(line)![1]),
    }));
}

/** Connects the official SDK v2 client, pinned to 2026-07-28, to the broker with a token. */
export async function connectModernClient(
  baseUrl: string,
  token: string,
  capabilities: Record<string, unknown> = {},
): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'broker-modern-e2e', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: MODERN_PROTOCOL_VERSION } } },
  );
  await client.connect(
    new ModernClientTransport(new URL(`${baseUrl}/api/mcp-broker/mcp`), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  return client;
}

/**
 * One 2026-07-28 `tools/call` with raw HTTP (the headers and `_meta` a modern client sends):
 * the HTTP status, every JSON-RPC message of the answer (JSON or SSE), and the response.
 */
export async function modernToolCall(
  baseUrl: string,
  token: string,
  id: number,
  params: Record<string, unknown>,
  meta: Record<string, unknown> = {},
): Promise<{
  status: number;
  messages: Array<Record<string, any>>;
  response: Record<string, any>;
}> {
  const res = await fetch(`${baseUrl}/api/mcp-broker/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      'mcp-method': 'tools/call',
      'mcp-name': String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN_PROTOCOL_VERSION,
          'io.modelcontextprotocol/clientCapabilities': {},
          'io.modelcontextprotocol/clientInfo': { name: 'raw-e2e', version: '1.0.0' },
          ...meta,
        },
      },
    }),
  });
  const text = await res.text();
  const messages = res.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter(line => line.startsWith('data: '))
        .map(line => JSON.parse(line.slice(6)))
    : [JSON.parse(text)];
  return { status: res.status, messages, response: messages.find(m => m.id === id)! };
}
