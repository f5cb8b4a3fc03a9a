/*
 * Helpers for the broker's end-to-end tests: real MCP servers (the repository's example server,
 * @modelcontextprotocol/server-everything as a child process) and official SDK clients
 * connected to the broker in the real backend process.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** Waits until `check` returns a truthy value, polling every 50 ms. */
export async function waitFor<T>(check: () => T | Promise<T>, timeoutMs = 10_000, what = 'condition'): Promise<T> {
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

/** server-everything in streamable-HTTP mode as a child process. */
export interface EverythingServer {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Starts `@modelcontextprotocol/server-everything streamableHttp` on `port` and waits until it answers. */
export async function startEverythingServer(port: number): Promise<EverythingServer> {
  const entry = require.resolve('@modelcontextprotocol/server-everything/dist/index.js');
  const child: ChildProcess = spawn(process.execPath, [entry, 'streamableHttp'], {
    env: { ...process.env, PORT: String(port) },
    // It logs every request to stdout; nobody needs that here.
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', chunk => {
    stderr += chunk;
  });
  const url = `http://127.0.0.1:${port}/mcp`;
  await waitFor(
    async () => {
      if (child.exitCode !== null) throw new Error(`server-everything exited: ${stderr}`);
      try {
        await fetch(url, { method: 'GET' });
        return true;
      } catch {
        return false;
      }
    },
    20_000,
    'server-everything to listen',
  );
  const exited = new Promise<void>(resolve => child.once('exit', () => resolve()));
  return {
    url,
    port,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGKILL');
        await exited;
      }
    },
  };
}

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
