/*
 * A backend's URL-mode elicitations (spec §11.1), in a test backend (startTestBackend, mocked
 * auth, so the broker runs on loopback: development) in front of the raw test backend, whose
 * `elicit` tool sends `elicitation/create` with `mode: "url"` and reports what came back; the
 * client is the official SDK 1.x client with URL-mode elicitation. An https link (and, in
 * development, a loopback http one) reaches the person named with its server; any other http
 * link, and any link to the broker's own pages, is refused toward the backend with a JSON-RPC
 * error and never reaches the person.
 */
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

describe("a backend's URL elicitations (startTestBackend on loopback, the raw test backend, the SDK 1.x client)", () => {
  let raw: RawMcpBackend;
  let stop: () => Promise<void>;
  let baseUrl: string;
  let client: Client;
  const asked: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    raw = await startRawMcpBackend();
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: { mcpBroker: { servers: [{ name: 'raw', url: raw.url }] } },
        }),
      ],
    });
    stop = async () => server.stop?.();
    baseUrl = `http://localhost:${(server.address() as AddressInfo).port}`;
    client = new Client(
      { name: 'url-elicitation-test', version: '1.0.0' },
      { capabilities: { elicitation: { url: {}, form: {} } } },
    );
    client.setRequestHandler(ElicitRequestSchema, async request => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/mcp-broker/mcp`), {
        requestInit: {
          headers: { Authorization: mockCredentials.user.header('user:default/carol') },
        },
      }),
    );
    await waitFor(
      async () => (await client.listTools()).tools.some(t => t.name === 'raw_elicit'),
      'the broker to list the raw backend',
    );
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await stop?.();
    await raw?.close();
  });

  /** Has the backend send a URL elicitation with `url`; what the backend got back. */
  async function elicit(id: string, url: string) {
    const result: any = await client.callTool({ name: 'raw_elicit', arguments: { id, url } });
    return result.structuredContent.answer as Record<string, any>;
  }

  it('relays an https link, and a loopback http one in development, named with its server', async () => {
    expect(await elicit('1', 'https://github.example/login/device')).toEqual({
      action: 'accept',
    });
    expect(await elicit('2', 'http://127.0.0.1:8123/callback')).toEqual({ action: 'accept' });
    expect(asked).toEqual([
      expect.objectContaining({
        mode: 'url',
        url: 'https://github.example/login/device',
        message: 'MCP server "raw" asks you to open a link: Open the link for 1',
      }),
      expect.objectContaining({ mode: 'url', url: 'http://127.0.0.1:8123/callback' }),
    ]);
  }, 30_000);

  it("refuses toward the backend a plain http link elsewhere and any link to the broker's own pages; the person never sees them", async () => {
    const before = asked.length;
    for (const [id, url] of [
      ['3', 'http://login.example/store-your-credential'],
      ['4', `${baseUrl}/api/mcp-broker/connect/raw`],
      ['5', `${baseUrl}/API/MCP-BROKER/credentials/raw`],
      ['6', 'not a url'],
    ]) {
      expect({ url, answer: await elicit(id, url) }).toEqual({
        url,
        answer: {
          code: -32602,
          message: expect.stringMatching(
            /^The MCP broker does not relay this URL elicitation to the person: /,
          ),
        },
      });
    }
    expect(asked.length).toBe(before);
  }, 30_000);
});
