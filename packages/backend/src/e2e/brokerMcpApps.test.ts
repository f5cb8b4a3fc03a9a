/*
 * MCP Apps through the real backend process (docs/contracts/tasks-and-apps.md §3): the two
 * official example app servers (`@modelcontextprotocol/server-basic-vanillajs` and
 * `server-basic-react`, ext-apps 2.x) behind the broker at once. Both name their UI
 * `ui://get-time/mcp-app.html`, each with HTML of its own; through the broker each server's UI
 * is listed and read under `ui://<server>/get-time/mcp-app.html`, the tools point at those, and
 * reading one returns that package's HTML byte for byte — for an SDK 1.x client (2025-11-25) and
 * an SDK v2 client pinned to 2026-07-28.
 */
import { ExampleAppServer, startExampleAppServer } from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitForBrokerBackends } from './brokerTestKit';
import { connectModernClient, modernRequest } from './__testUtils__/modernBrokerClient';

const VANILLA_UI = 'ui://vanilla/get-time/mcp-app.html';
const REACT_UI = 'ui://react/get-time/mcp-app.html';

describe('two MCP App servers with clashing UI URIs behind the broker', () => {
  let vanilla: ExampleAppServer;
  let react: ExampleAppServer;
  let backend: BackendProcess;
  let carol: string;
  let client: BrokerClient | undefined;

  beforeAll(async () => {
    [vanilla, react] = await Promise.all([
      startExampleAppServer('vanillajs'),
      startExampleAppServer('react'),
    ]);
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [
            { name: 'vanilla', url: vanilla.url },
            { name: 'react', url: react.url },
          ],
          reconnect: { initialDelay: { milliseconds: 100 }, maxDelay: { seconds: 1 } },
        },
      },
    });
    // Carol (portal-admin) may use every tool and resource: this is about URIs, not access.
    carol = await backend.signIn('carol');
    await waitForBrokerBackends(
      backend.baseUrl,
      carol,
      b => b.state === 'connected',
      'both app servers to connect',
    );
  }, 120_000);

  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  afterAll(async () => {
    await backend?.stop();
    await Promise.all([vanilla?.kill(), react?.kill()]);
  }, 30_000);

  it('serves two different example apps that name the same UI', () => {
    // What makes this test mean something: same URI upstream, different HTML.
    expect(vanilla.appHtml).not.toBe(react.appHtml);
  });

  it('lists each server’s UI under its own broker URI, tools pointing at it (2025-11-25)', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    const { tools } = await client.client.listTools();
    const uiOf = (name: string) => tools.find(t => t.name === name)?._meta;
    expect(uiOf('vanilla_get-time')).toMatchObject({
      ui: { resourceUri: VANILLA_UI },
      'ui/resourceUri': VANILLA_UI,
    });
    expect(uiOf('react_get-time')).toMatchObject({
      ui: { resourceUri: REACT_UI },
      'ui/resourceUri': REACT_UI,
    });
    const { resources } = await client.client.listResources();
    expect(resources.map(r => r.uri).sort()).toEqual([REACT_UI, VANILLA_UI]);
    expect(resources.every(r => r.mimeType === 'text/html;profile=mcp-app')).toBe(true);
  }, 30_000);

  it('reads each server’s own HTML byte for byte through its broker URI (2025-11-25)', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    for (const [uri, server] of [
      [VANILLA_UI, vanilla],
      [REACT_UI, react],
    ] as const) {
      const { contents } = await client.client.readResource({ uri });
      expect(contents).toEqual([
        { uri, mimeType: 'text/html;profile=mcp-app', text: server.appHtml },
      ]);
    }
  }, 30_000);

  it('calls each app server’s tool under its broker name (2025-11-25)', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    for (const name of ['vanilla_get-time', 'react_get-time']) {
      const result = await client.client.callTool({ name, arguments: {} });
      expect(result.isError).not.toBe(true);
      // Both answer the time as text (only the vanilla one adds structuredContent).
      const [first] = result.content as Array<{ type: string; text: string }>;
      expect(first.type).toBe('text');
      expect(Date.parse(first.text)).not.toBeNaN();
    }
  }, 30_000);

  it('does not route the servers’ own (clashing) UI URI to either of them', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    await expect(client.client.readResource({ uri: 'ui://get-time/mcp-app.html' })).rejects.toThrow(
      /unknown resource "ui:\/\/get-time\/mcp-app\.html"/,
    );
  }, 30_000);

  it('gives a 2026-07-28 client the same broker URIs and each server’s own HTML', async () => {
    const modern = await connectModernClient(backend.baseUrl, carol);
    try {
      const { tools } = await modern.listTools();
      expect(
        tools
          .filter(t => t.name.endsWith('get-time'))
          .map(t => [t.name, (t._meta?.ui as { resourceUri?: string })?.resourceUri])
          .sort(),
      ).toEqual([
        ['react_get-time', REACT_UI],
        ['vanilla_get-time', VANILLA_UI],
      ]);
      const { resources } = await modern.listResources();
      expect(resources.map(r => r.uri).sort()).toEqual([REACT_UI, VANILLA_UI]);
      for (const [uri, server] of [
        [VANILLA_UI, vanilla],
        [REACT_UI, react],
      ] as const) {
        const { contents } = await modern.readResource({ uri });
        expect(contents).toEqual([expect.objectContaining({ uri, text: server.appHtml })]);
      }
    } finally {
      await modern.close();
    }
  }, 30_000);

  it('answers a raw 2026-07-28 read of the clashing URI with -32602', async () => {
    const answer = await modernRequest(backend.baseUrl, carol, 1, 'resources/read', {
      uri: 'ui://get-time/mcp-app.html',
    });
    expect(answer.response.error).toMatchObject({
      code: -32602,
      message: expect.stringContaining('ui://get-time/mcp-app.html'),
    });
  }, 30_000);
});
