/*
 * Which methods the rate limits count (`mcpBroker.rateLimits.methods`, checked against the method
 * table's `limited` column) in a test backend (startTestBackend, mocked auth) in front of the
 * repository's example MCP server (a real SDK server: tools, a prompt, a resource). The
 * development backend's e2e test (brokerRateLimitMethods) shows every limited method counted by
 * default, in both eras, with personal credentials.
 */
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { JsonObject } from '@backstage/types';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

function brokerWith(example: ExampleMcpServer, rateLimits: JsonObject) {
  return startTestBackend({
    features: [
      mcpBrokerPlugin,
      mockServices.rootConfig.factory({
        data: { mcpBroker: { servers: [{ name: 'example', url: example.url }], rateLimits } },
      }),
    ],
  });
}

describe('mcpBroker.rateLimits.methods (startTestBackend, the example MCP server)', () => {
  let example: ExampleMcpServer;

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
  });

  afterAll(async () => {
    await example?.close();
  });

  it('refuses to start when it names a method that does not reach a server on a person’s behalf', async () => {
    await expect(
      brokerWith(example, {
        methods: ['tools/call', 'tools/list'],
        default: { calls: 1, per: '1h' },
      }),
    ).rejects.toThrow(
      /Invalid mcpBroker\.rateLimits\.methods: "tools\/list" is not a method that reaches a server on a person's behalf; use some of tools\/call, prompts\/get, resources\/read, completion\/complete/,
    );
  }, 30_000);

  it('counts only the methods it names: with [tools/call], prompts and resources stay unlimited while tool calls are refused', async () => {
    const { server } = await brokerWith(example, {
      methods: ['tools/call'],
      overrides: [{ server: 'example', calls: 1, per: { hours: 1 } }],
    });
    const client = new Client({ name: 'methods-test', version: '1.0.0' });
    try {
      const port = (server.address() as AddressInfo).port;
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/api/mcp-broker/mcp`), {
          requestInit: {
            headers: { Authorization: mockCredentials.user.header('user:default/carol') },
          },
        }),
      );
      await waitFor(
        async () => (await client.listPrompts()).prompts.some(p => p.name === 'example_greeting'),
        'the broker to list the example server',
      );
      for (let i = 0; i < 3; i += 1) {
        const prompt = await client.getPrompt({
          name: 'example_greeting',
          arguments: { name: 'x' },
        });
        expect(prompt.messages).toHaveLength(1);
        const read = await client.readResource({ uri: 'example://readme' });
        expect(read.contents).toHaveLength(1);
      }
      await client.callTool({ name: 'example_echo', arguments: { message: 'one' } });
      await expect(
        client.callTool({ name: 'example_echo', arguments: { message: 'two' } }),
      ).rejects.toThrow(/Rate limit reached: 1 tool call per hour on server \\*"example\\*"/);
    } finally {
      await client.close();
      await server.stop?.();
    }
  }, 30_000);
});
