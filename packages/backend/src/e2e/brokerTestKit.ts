/*
 * Helpers for the broker's end-to-end tests: waiting, official SDK clients connected to the
 * broker in the real backend process, and a mixed fleet of backends (the MCP servers come from
 * @internal/example-mcp-server and @internal/test-mcp-backends).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ExampleMcpServer,
  ModernExampleMcpServer,
  startExampleMcpServer,
  startModernExampleMcpServer,
} from '@internal/example-mcp-server';

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

/**
 * The repository's example servers of both protocol eras, in this process: `legacy`
 * (2025-11-25, SDK 1.x, sessions) and `modern` (2026-07-28, SDK v2, stateless). `servers` is the
 * `mcpBroker.servers` config for them, named `example` and `modern`.
 */
export interface ExampleFleet {
  legacy: ExampleMcpServer;
  modern: ModernExampleMcpServer;
  servers: Array<{ name: string; url: string }>;
  close(): Promise<void>;
}

/** Starts both example servers on free ports. */
export async function startExampleFleet(): Promise<ExampleFleet> {
  const legacy = await startExampleMcpServer({ port: 0 });
  const modern = await startModernExampleMcpServer({ port: 0 }).catch(async error => {
    await legacy.close();
    throw error;
  });
  return {
    legacy,
    modern,
    servers: [
      { name: 'example', url: legacy.url },
      { name: 'modern', url: modern.url },
    ],
    async close() {
      await Promise.all([legacy.close(), modern.close()]);
    },
  };
}
