/*
 * Era detection's legacy fallback through the whole plugin (startTestBackend, auth mocked: a
 * request without a token counts as a signed-in user): a real SDK 1.x backend behind a front
 * that answers `server/discover` with HTTP 500, as some 2025-11-25 servers answer a method they
 * do not know; the official SDK client on the broker's endpoint lists and calls its tools.
 */
import type { AddressInfo } from 'node:net';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import {
  FailingMethodsFront,
  startFailingMethodsFront,
} from './backend/__testUtils__/failingMethodsFront';
import { waitFor } from './testing/waitFor';

describe('a 2025-11-25 backend that answers server/discover with HTTP 500 (startTestBackend)', () => {
  let legacy: ExampleMcpServer;
  let front: FailingMethodsFront;
  let broker: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let client: Client | undefined;

  beforeAll(async () => {
    legacy = await startExampleMcpServer({ port: 0 });
    front = await startFailingMethodsFront(legacy.url, ['server/discover']);
    ({ server: broker } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'fallback', url: front.url }],
              reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
            },
          },
        }),
      ],
    }));
  });

  afterAll(async () => {
    await client?.close();
    await broker?.stop?.();
    await front?.close();
    await legacy?.close();
  });

  it('is connected as legacy, and its tools are listed and called through the broker', async () => {
    const entry = await waitFor(async () => {
      const status = await request(broker).get('/api/mcp-broker/status');
      const backend = status.body.backends?.[0];
      return backend?.state === 'connected' ? backend : undefined;
    }, 'the backend to connect');
    expect(entry).toMatchObject({ name: 'fallback', era: 'legacy', consecutiveFailures: 0 });
    expect(front.failed()).toEqual(['server/discover']);

    client = new Client({ name: 'era-fallback-test', version: '1.0.0' });
    const port = (broker.address() as AddressInfo).port;
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/api/mcp-broker/mcp`)),
    );
    const { tools } = await client.listTools();
    expect(tools.map(tool => tool.name)).toContain('fallback_echo');
    const result = await client.callTool({
      name: 'fallback_echo',
      arguments: { message: 'behind a 500' },
    });
    expect(result.content).toEqual([{ type: 'text', text: 'behind a 500' }]);
  }, 30_000);
});
