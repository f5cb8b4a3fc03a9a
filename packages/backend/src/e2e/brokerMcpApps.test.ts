/*
 * MCP Apps through the real backend process (docs/contracts/tasks-and-apps.md §3): the two
 * official example app servers (`@modelcontextprotocol/server-basic-vanillajs` and
 * `server-basic-react`, ext-apps 2.x) behind the broker at once. Both name their UI
 * `ui://get-time/mcp-app.html`, each with HTML of its own; through the broker each server's UI
 * is listed and read under `ui://<server>/get-time/mcp-app.html`, the tools point at those, and
 * reading one returns that package's HTML byte for byte — for an SDK 1.x client (2025-11-25) and
 * an SDK v2 client pinned to 2026-07-28. Beside them a small app server that registers its UI
 * tools only for clients declaring `io.modelcontextprotocol/ui` and has an app-only tool
 * (`uiNegotiatingAppServer`): the broker declares the extension for its catalog, relays each
 * client's own declaration (or none) on its calls, and hides app-only tools from plain clients.
 * An app's call of its server's own tool name (`get-time`, as the example apps call it) is
 * routed by the host's origin hint, else by uniqueness, else refused as ambiguous (§3.6), and so
 * is an app's read of its server's own UI URI.
 */
import {
  BOARD_UI_HTML,
  ExampleAppServer,
  startExampleAppServer,
  startUiNegotiatingAppServer,
  UiNegotiatingAppServer,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitForBrokerBackends } from './brokerTestKit';
import { connectModernClient, modernRequest } from './__testUtils__/modernBrokerClient';

const VANILLA_UI = 'ui://vanilla/get-time/mcp-app.html';
const REACT_UI = 'ui://react/get-time/mcp-app.html';
const BOARD_UI = 'ui://board/board/view.html';
/** What a host that renders MCP Apps declares (ext-apps). */
const UI_EXTENSION = { mimeTypes: ['text/html;profile=mcp-app'] };
const UI_CAPABILITIES = { extensions: { 'io.modelcontextprotocol/ui': UI_EXTENSION } };

describe('two MCP App servers with clashing UI URIs behind the broker', () => {
  let vanilla: ExampleAppServer;
  let react: ExampleAppServer;
  let board: UiNegotiatingAppServer;
  let backend: BackendProcess;
  let carol: string;
  let client: BrokerClient | undefined;

  beforeAll(async () => {
    [vanilla, react, board] = await Promise.all([
      startExampleAppServer('vanillajs'),
      startExampleAppServer('react'),
      startUiNegotiatingAppServer(),
    ]);
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [
            { name: 'vanilla', url: vanilla.url },
            { name: 'react', url: react.url },
            { name: 'board', url: board.url },
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
    await Promise.all([vanilla?.kill(), react?.kill(), board?.close()]);
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
    expect(resources.map(r => r.uri).sort()).toEqual([BOARD_UI, REACT_UI, VANILLA_UI]);
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
      expect(resources.map(r => r.uri).sort()).toEqual([BOARD_UI, REACT_UI, VANILLA_UI]);
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
  /** An SDK 1.x client that declares `capabilities` (UI or none). */
  async function legacyClient(capabilities: Record<string, unknown>): Promise<Client> {
    const legacy = new Client({ name: 'broker-e2e-apps', version: '1.0.0' }, { capabilities });
    await legacy.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${carol}` } },
      }),
    );
    return legacy;
  }

  /** The first text of a tool's result, for a client of either SDK. */
  async function toolText(
    caller: {
      callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<unknown>;
    },
    name: string,
  ): Promise<string> {
    const result = (await caller.callTool({ name, arguments: {} })) as {
      content: Array<{ text: string }>;
    };
    return result.content[0].text;
  }

  it('declares the UI extension for its catalog, so a negotiating server lists its UI tools', async () => {
    const ui = await legacyClient(UI_CAPABILITIES);
    try {
      const names = (await ui.listTools()).tools
        .map(t => t.name)
        .filter(n => n.startsWith('board_'));
      expect(names.sort()).toEqual([
        'board_link-board',
        'board_refresh-board',
        'board_show-board',
        'board_ui-capability',
      ]);
      expect(ui.getServerCapabilities()?.extensions).toEqual({ 'io.modelcontextprotocol/ui': {} });
    } finally {
      await ui.close();
    }
  }, 30_000);

  it('relays a 2025-11-25 client’s own UI declaration, or none, on its calls', async () => {
    const ui = await legacyClient(UI_CAPABILITIES);
    const plain = await legacyClient({});
    try {
      expect(JSON.parse(await toolText(ui, 'board_ui-capability'))).toEqual(UI_EXTENSION);
      expect(JSON.parse(await toolText(plain, 'board_ui-capability'))).toBeNull();
      // The app-only tool works for the app's host.
      expect(await toolText(ui, 'board_refresh-board')).toBe('board refreshed');
    } finally {
      await Promise.all([ui.close(), plain.close()]);
    }
  }, 30_000);

  it('hides app-only tools from a client that did not declare the UI extension', async () => {
    const plain = await legacyClient({});
    try {
      const names = (await plain.listTools()).tools.map(t => t.name);
      expect(names).toContain('board_show-board');
      expect(names).not.toContain('board_refresh-board');
      await expect(plain.callTool({ name: 'board_refresh-board', arguments: {} })).rejects.toThrow(
        /unknown tool "board_refresh-board"/,
      );
    } finally {
      await plain.close();
    }
  }, 30_000);

  it('rewrites a UI link in a tool result and reads it back', async () => {
    const plain = await legacyClient({});
    try {
      const result = await plain.callTool({ name: 'board_link-board', arguments: {} });
      expect(result.content).toEqual([{ type: 'resource_link', uri: BOARD_UI, name: 'board' }]);
      const { contents } = await plain.readResource({ uri: BOARD_UI });
      expect(contents).toEqual([
        { uri: BOARD_UI, mimeType: 'text/html;profile=mcp-app', text: BOARD_UI_HTML },
      ]);
    } finally {
      await plain.close();
    }
  }, 30_000);

  it('relays a 2026-07-28 client’s UI declaration from its _meta, and hides app-only tools without it', async () => {
    const ui = await connectModernClient(backend.baseUrl, carol, UI_CAPABILITIES);
    const plain = await connectModernClient(backend.baseUrl, carol);
    try {
      expect(JSON.parse(await toolText(ui, 'board_ui-capability'))).toEqual(UI_EXTENSION);
      expect(JSON.parse(await toolText(plain, 'board_ui-capability'))).toBeNull();
      expect((await ui.listTools()).tools.map(t => t.name)).toContain('board_refresh-board');
      expect((await plain.listTools()).tools.map(t => t.name)).not.toContain('board_refresh-board');
    } finally {
      await Promise.all([ui.close(), plain.close()]);
    }
  }, 30_000);

  describe('an app calling its server’s own tool by the name the server registered', () => {
    const hint = (resourceUri: string) => ({ ui: { resourceUri } });

    it('reaches the server its host’s hint names, in both eras', async () => {
      const legacy = await legacyClient(UI_CAPABILITIES);
      const modern = await connectModernClient(backend.baseUrl, carol, UI_CAPABILITIES);
      try {
        for (const host of [legacy, modern] as Array<{
          callTool(params: Record<string, unknown>): Promise<unknown>;
        }>) {
          const call = async (uri: string) =>
            (await host.callTool({ name: 'get-time', arguments: {}, _meta: hint(uri) })) as {
              structuredContent?: unknown;
            };
          // Only the vanilla server answers with structuredContent.
          expect((await call(VANILLA_UI)).structuredContent).toBeDefined();
          expect((await call(REACT_UI)).structuredContent).toBeUndefined();
        }
      } finally {
        await Promise.all([legacy.close(), modern.close()]);
      }
    }, 30_000);

    it('refuses to guess between two servers without a hint, naming the broker names', async () => {
      const ui = await legacyClient(UI_CAPABILITIES);
      try {
        await expect(ui.callTool({ name: 'get-time', arguments: {} })).rejects.toMatchObject({
          code: -32602,
          data: {
            reason: 'ambiguous-app-tool',
            candidates: ['react_get-time', 'vanilla_get-time'],
          },
        });
      } finally {
        await ui.close();
      }
      const answer = await modernRequest(
        backend.baseUrl,
        carol,
        2,
        'tools/call',
        { name: 'get-time', arguments: {} },
        { 'io.modelcontextprotocol/clientCapabilities': UI_CAPABILITIES },
      );
      expect(answer.response.error).toEqual({
        code: -32602,
        message:
          'Tool "get-time" is ambiguous: MCP servers "react" and "vanilla" both have it; call it by its broker name ("react_get-time" or "vanilla_get-time")',
        data: { reason: 'ambiguous-app-tool', candidates: ['react_get-time', 'vanilla_get-time'] },
      });
    }, 30_000);

    it('reads an app’s own UI URI from the server the hint names, and refuses to guess without one', async () => {
      const ui = await legacyClient(UI_CAPABILITIES);
      try {
        const own = 'ui://get-time/mcp-app.html';
        const { contents } = await ui.readResource({ uri: own, _meta: hint(VANILLA_UI) });
        expect(contents).toEqual([
          { uri: VANILLA_UI, mimeType: 'text/html;profile=mcp-app', text: vanilla.appHtml },
        ]);
        await expect(ui.readResource({ uri: own })).rejects.toMatchObject({
          code: -32602,
          data: { reason: 'ambiguous-app-resource', candidates: [REACT_UI, VANILLA_UI] },
        });
      } finally {
        await ui.close();
      }
    }, 30_000);

    it('reaches the one server that has the tool without a hint, and never for a plain agent', async () => {
      const ui = await legacyClient(UI_CAPABILITIES);
      const plain = await legacyClient({});
      try {
        expect(await toolText(ui, 'refresh-board')).toBe('board refreshed');
        await expect(plain.callTool({ name: 'refresh-board', arguments: {} })).rejects.toThrow(
          /unknown tool "refresh-board"/,
        );
      } finally {
        await Promise.all([ui.close(), plain.close()]);
      }
    }, 30_000);
  });
});
