/*
 * Helpers for the broker's end-to-end tests: waiting, and official SDK clients connected to the
 * broker in the real backend process (the MCP servers come from @internal/example-mcp-server and
 * @internal/test-mcp-backends).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

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
