/*
 * An MCP App's call of its own server's tool by the name the server registered, through the
 * real plugin (docs/contracts/tasks-and-apps.md §3.6): startTestBackend (auth mocked: a request
 * without a token counts as a signed-in user), the two official example app servers (both with
 * `get-time`: the vanilla one answers with `structuredContent`, the react one without) and the
 * UI-negotiating app server (the only one with `refresh-board`, app-only), the official SDK 1.x
 * client as a host; the auditor is a test double that records the events, the OpenTelemetry SDK
 * runs in memory. An app's read of its
 * server's own UI URI (`ui://get-time/mcp-app.html`) resolves the same way, and so does a
 * completion of an argument of its server's own UI template (`ui://board-views/{view}`).
 */
import type { AddressInfo } from 'node:net';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import {
  BOARD_VIEWS_TEMPLATE,
  ExampleAppServer,
  startExampleAppServer,
  startUiNegotiatingAppServer,
  UiNegotiatingAppServer,
} from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CompleteResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { mcpBrokerPlugin } from './plugin';
import { recordingAuditor } from './__testUtils__/recordingAuditor';
import { MetricName } from './telemetry/BrokerMetrics';
import { InMemoryTelemetry } from './telemetry/__testUtils__/inMemoryTelemetry';
import { waitFor } from './testing/waitFor';

const UI_CAPABILITIES = {
  extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
};
const hint = (resourceUri: string) => ({ ui: { resourceUri } });

describe('an MCP App calling its server’s own tool through the broker (startTestBackend, real app servers)', () => {
  const { factory: auditorFactory, events: audit } = recordingAuditor();
  const sdk = new InMemoryTelemetry();
  let vanilla: ExampleAppServer;
  let react: ExampleAppServer;
  let board: UiNegotiatingAppServer;
  let stop: () => Promise<void>;
  let endpoint: URL;
  const clients: Client[] = [];

  async function connect(capabilities: Record<string, unknown>): Promise<Client> {
    const client = new Client({ name: 'app-host', version: '1.0.0' }, { capabilities });
    await client.connect(new StreamableHTTPClientTransport(endpoint));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    sdk.install();
    // Each kept as soon as it runs, so that afterAll stops it even when another fails to start.
    await Promise.all([
      startExampleAppServer('vanillajs').then(started => (vanilla = started)),
      startExampleAppServer('react').then(started => (react = started)),
      startUiNegotiatingAppServer().then(started => (board = started)),
    ]);
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        auditorFactory,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [
                { name: 'vanilla', url: vanilla.url },
                { name: 'react', url: react.url },
                { name: 'board', url: board.url },
              ],
              reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
            },
          },
        }),
      ],
    });
    stop = async () => server.stop?.();
    endpoint = new URL(
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker/mcp`,
    );
    const host = await connect(UI_CAPABILITIES);
    await waitFor(async () => {
      const names = (await host.listTools()).tools.map(tool => tool.name);
      return ['vanilla_get-time', 'react_get-time', 'board_refresh-board'].every(name =>
        names.includes(name),
      );
    }, 'the three app servers to be listed');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close()));
    await stop?.();
    await Promise.all([vanilla?.kill(), react?.kill(), board?.close()]);
    await sdk.uninstall();
  }, 30_000);

  it('shows each app server’s UI resources on /status', async () => {
    const status = await (await fetch(new URL('/api/mcp-broker/status', endpoint))).json();
    // Each serves one UI (listed, and linked by its tools); the board's template is not one.
    expect(status.backends.map((backend: any) => [backend.name, backend.apps.uiResources])).toEqual(
      [
        ['vanilla', 1],
        ['react', 1],
        ['board', 1],
      ],
    );
  });

  it('routes a hinted call to the server whose UI the hint names, and audits how', async () => {
    const host = await connect(UI_CAPABILITIES);
    const fromVanilla = await host.callTool({
      name: 'get-time',
      arguments: {},
      _meta: hint('ui://vanilla/get-time/mcp-app.html'),
    });
    const fromReact = await host.callTool({
      name: 'get-time',
      arguments: {},
      _meta: hint('ui://react/get-time/mcp-app.html'),
    });
    // Only the vanilla server answers with structuredContent: each reached its own server.
    expect(fromVanilla.structuredContent).toBeDefined();
    expect(fromReact.structuredContent).toBeUndefined();
    expect(Date.parse((fromReact.content as Array<{ text: string }>)[0].text)).not.toBeNaN();
    const resolved = audit.filter(e => e.meta.nameResolution === 'hint');
    expect(
      resolved.map(e => [e.meta.server, e.meta.tool, e.meta.appOrigin, e.end?.outcome]),
    ).toEqual([
      ['vanilla', 'get-time', 'vanilla', 'succeeded'],
      ['react', 'get-time', 'react', 'succeeded'],
    ]);
  }, 30_000);

  it('answers an unhinted call that two servers could serve with the ambiguity error', async () => {
    const host = await connect(UI_CAPABILITIES);
    await expect(host.callTool({ name: 'get-time', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message:
        'MCP error -32602: Tool "get-time" is ambiguous: MCP servers "react" and "vanilla" both have it; call it by its broker name ("react_get-time" or "vanilla_get-time")',
      data: { reason: 'ambiguous-app-tool', candidates: ['react_get-time', 'vanilla_get-time'] },
    });
  }, 30_000);

  it('routes an unhinted call that one server can serve there, without the hint reaching it', async () => {
    const host = await connect(UI_CAPABILITIES);
    const unique = await host.callTool({ name: 'refresh-board', arguments: {} });
    // The server echoes the _meta it got: only the broker's trace context (contract §4).
    expect(unique.content).toEqual([
      { type: 'text', text: 'board refreshed' },
      {
        type: 'text',
        text: expect.stringMatching(/^\{"traceparent":"00-[0-9a-f]{32}-[0-9a-f]{16}-01"\}$/),
      },
    ]);
    expect(audit.at(-1)?.meta).toMatchObject({
      server: 'board',
      tool: 'refresh-board',
      nameResolution: 'unique',
    });
    // Its own hint is routing for the broker: the server never sees a broker UI URI.
    const hinted = await host.callTool({
      name: 'refresh-board',
      arguments: {},
      _meta: { ...hint('ui://board/board/view.html'), keep: 'me' },
    });
    expect(JSON.parse((hinted.content as Array<{ text: string }>)[1].text)).toEqual({
      keep: 'me',
      traceparent: expect.any(String),
    });
  }, 30_000);

  it('keeps another server’s app-only tool from an app, by either name', async () => {
    const host = await connect(UI_CAPABILITIES);
    const vanillaApp = hint('ui://vanilla/get-time/mcp-app.html');
    for (const name of ['refresh-board', 'board_refresh-board']) {
      await expect(host.callTool({ name, arguments: {}, _meta: vanillaApp })).rejects.toThrow(
        `unknown tool "${name}"`,
      );
    }
  }, 30_000);

  it('gives a client that did not declare the UI extension no resolution at all', async () => {
    const agent = await connect({});
    for (const name of ['get-time', 'refresh-board']) {
      await expect(agent.callTool({ name, arguments: {} })).rejects.toThrow(
        `unknown tool "${name}"`,
      );
    }
  }, 30_000);

  it('reads an app’s own UI URI from the server the hint names, and refuses to guess without one', async () => {
    const host = await connect(UI_CAPABILITIES);
    const own = 'ui://get-time/mcp-app.html';
    const { contents } = await host.readResource({
      uri: own,
      _meta: hint('ui://react/get-time/mcp-app.html'),
    });
    expect(contents).toEqual([
      {
        uri: 'ui://react/get-time/mcp-app.html',
        mimeType: 'text/html;profile=mcp-app',
        text: react.appHtml,
      },
    ]);
    await expect(host.readResource({ uri: own })).rejects.toMatchObject({
      code: -32602,
      data: {
        reason: 'ambiguous-app-resource',
        candidates: ['ui://react/get-time/mcp-app.html', 'ui://vanilla/get-time/mcp-app.html'],
      },
    });
    const agent = await connect({});
    await expect(
      agent.readResource({ uri: own, _meta: hint('ui://react/get-time/mcp-app.html') }),
    ).rejects.toThrow(`unknown resource "${own}"`);
  }, 30_000);

  it('completes an argument of an app’s own UI template at the one server that has it, and refuses to guess between two', async () => {
    // Raw requests: the SDK client's complete() checks the server's capabilities first.
    const complete = (client: Client, uri: string, _meta?: Record<string, unknown>) =>
      client.request(
        {
          method: 'completion/complete',
          params: {
            ref: { type: 'ref/resource', uri },
            argument: { name: 'view', value: 'w' },
            ...(_meta && { _meta }),
          },
        },
        CompleteResultSchema,
      );
    const host = await connect(UI_CAPABILITIES);
    // Only the board server has the template: resolved without a hint, by its broker URI too.
    expect((await complete(host, BOARD_VIEWS_TEMPLATE)).completion.values).toEqual(['weekly']);
    expect((await complete(host, 'ui://board/board-views/{view}')).completion.values).toEqual([
      'weekly',
    ]);
    // Both example servers serve ui://get-time/…: without a hint the broker does not guess.
    await expect(complete(host, 'ui://get-time/mcp-app.html')).rejects.toMatchObject({
      code: -32602,
      data: {
        reason: 'ambiguous-app-resource',
        candidates: ['ui://react/get-time/mcp-app.html', 'ui://vanilla/get-time/mcp-app.html'],
      },
    });
    // A client that is no host gets no resolution: the URI names no server.
    const agent = await connect({});
    await expect(complete(agent, BOARD_VIEWS_TEMPLATE)).rejects.toThrow(
      `unknown resource "${BOARD_VIEWS_TEMPLATE}"`,
    );
  }, 30_000);

  it('counts each resolution in mcp_broker.app_calls, with the server when one was found', async () => {
    const counts = async () =>
      new Map(
        (await sdk.points(MetricName.appCalls)).map(point => [
          `${point.attributes['mcp_broker.app_call.resolution']}/${point.attributes['mcp_broker.server'] ?? ''}`,
          point.value,
        ]),
      );
    const before = await counts();
    const host = await connect(UI_CAPABILITIES);
    await host.callTool({
      name: 'get-time',
      arguments: {},
      _meta: hint('ui://react/get-time/mcp-app.html'),
    });
    await host.callTool({ name: 'refresh-board', arguments: {} });
    await expect(host.callTool({ name: 'get-time', arguments: {} })).rejects.toThrow(/ambiguous/);
    await expect(host.callTool({ name: 'no-such-tool', arguments: {} })).rejects.toThrow(
      /unknown tool/,
    );
    // A plain agent's unknown name is no app call.
    const agent = await connect({});
    await expect(agent.callTool({ name: 'get-time', arguments: {} })).rejects.toThrow(
      /unknown tool/,
    );
    const after = await counts();
    const added = Object.fromEntries(
      [...after]
        .map(([key, value]) => [key, value - (before.get(key) ?? 0)])
        .filter(([, d]) => d !== 0),
    );
    expect(added).toEqual({
      'hint/react': 1,
      'unique/board': 1,
      'ambiguous/': 1,
      'unknown/': 1,
    });
  }, 30_000);
});
