/*
 * A backend MCP server that crashes in the middle of calls, on the real development backend: the
 * example server runs as a process of its own, 20 tool calls of four SDK clients are running on
 * it, and the process is killed (SIGKILL, as a crash). Each client gets a JSON-RPC error naming
 * the server within the request timeout; the broker reconnects with backoff while the server is
 * gone and as soon as it is back on the same address; and the same clients, on the same
 * sessions, call it again successfully (no client reconnects or re-initializes).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { ChildServer } from '@internal/test-mcp-backends';
// eslint-disable-next-line @backstage/no-forbidden-package-imports -- the broker's test helper
import { startExampleServerProcess } from '@devportal/plugin-mcp-broker-backend/src/backend/__testUtils__/exampleServerProcess';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { brokerStatus, waitFor } from './brokerTestKit';

/** The broker's timeout for a backend's answer (`mcpBroker.requestTimeout`), set here. */
const REQUEST_TIMEOUT_MS = 15_000;

describe('a backend MCP server killed while 20 calls run (real backend, server process)', () => {
  let backend: BackendProcess;
  let server: ChildServer;
  let token: string;
  const clients: Array<{ client: Client; transport: StreamableHTTPClientTransport }> = [];

  beforeAll(async () => {
    server = await startExampleServerProcess('legacy');
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [{ name: 'example', url: server.url }],
          requestTimeout: { milliseconds: REQUEST_TIMEOUT_MS },
          reconnect: { initialDelay: { milliseconds: 200 }, maxDelay: { seconds: 2 } },
        },
      },
    });
    // Carol may use every tool (the fixture's policy).
    token = await backend.signIn('carol');
    for (let i = 0; i < 4; i++) {
      const transport = new StreamableHTTPClientTransport(
        new URL(`${backend.baseUrl}/api/mcp-broker/mcp`),
        { requestInit: { headers: { Authorization: `Bearer ${token}` } } },
      );
      const client = new Client({ name: `crash-${i}`, version: '1.0.0' }, { capabilities: {} });
      await client.connect(transport);
      clients.push({ client, transport });
    }
    await waitFor(
      async () => (await clients[0].client.listTools()).tools.some(t => t.name === 'example_count'),
      20_000,
      'the example server listed',
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map(({ client }) => client.close().catch(() => undefined)));
    await backend?.stop();
    await server?.kill();
  }, 60_000);

  const exampleStatus = async () =>
    (await brokerStatus(backend.baseUrl, token)).backends.find(b => b.name === 'example')!;

  it('fails every running call naming the server, reconnects with backoff, and serves the same sessions again', async () => {
    const sessionIds = clients.map(({ transport }) => transport.sessionId);
    // 20 long calls, each reporting progress every 50 ms until it is cut off.
    const running = new Set<number>();
    const calls = clients.flatMap(({ client }, c) =>
      Array.from({ length: 5 }, (_, k) => {
        const n = c * 5 + k;
        return client
          .callTool({ name: 'example_count', arguments: { steps: 1000, delayMs: 50 } }, undefined, {
            onprogress: () => running.add(n),
            // The SDK's own timeout must not be what ends the call.
            timeout: 5 * 60_000,
          })
          .then(
            result => ({
              outcome: 'result' as const,
              detail: JSON.stringify(result),
              at: Date.now(),
            }),
            (error: Error) => ({
              outcome: 'error' as const,
              detail: error.message,
              at: Date.now(),
            }),
          );
      }),
    );
    await waitFor(() => running.size === 20, 20_000, 'all 20 calls to be running');

    const killedAt = Date.now();
    await server.kill();
    const outcomes = await Promise.all(calls);
    for (const { outcome, detail, at } of outcomes) {
      expect({ outcome, detail }).toEqual({
        outcome: 'error',
        detail: expect.stringMatching(/^MCP error -32000: .*MCP server "example"/),
      });
      expect(at - killedAt).toBeLessThan(REQUEST_TIMEOUT_MS);
    }

    // While the server is gone the broker retries with growing delays.
    const down = await waitFor(
      async () => {
        const status = await exampleStatus();
        return status.state !== 'connected' && status.consecutiveFailures >= 2 && status;
      },
      20_000,
      'the broker to fail two reconnects in a row',
    );
    expect(down).toMatchObject({ nextRetryAt: expect.any(String), lastError: expect.any(String) });

    // The server comes back on the same address; the broker reconnects by itself.
    server = await startExampleServerProcess('legacy', server.port);
    await waitFor(
      async () => (await exampleStatus()).state === 'connected',
      20_000,
      'the broker to reconnect',
    );

    // The same clients, on the same sessions, call the server again.
    const again = await Promise.all(
      clients.map(({ client }, c) =>
        client.callTool({ name: 'example_echo', arguments: { message: `after ${c}` } }),
      ),
    );
    expect(again.map(r => (r.content as Array<{ text: string }>)[0].text)).toEqual([
      'after 0',
      'after 1',
      'after 2',
      'after 3',
    ]);
    expect(clients.map(({ transport }) => transport.sessionId)).toEqual(sessionIds);
  }, 120_000);
});
