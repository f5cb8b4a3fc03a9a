/*
 * Config reload through the real plugin: startTestBackend (auth mocked: a request without a
 * token counts as a signed-in user) with a mockServices.rootConfig whose update() stands in for
 * Backstage's file watcher. Backends are real example MCP servers; the client is the official
 * SDK client on the broker's real HTTP endpoint.
 */
import type { AddressInfo } from 'node:net';
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ElicitResult,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { mcpBrokerPlugin } from './plugin';
import { NotificationMarker, notificationMarker } from './__testUtils__/notificationMarker';
import { waitFor } from './testing/waitFor';

describe('mcpBrokerPlugin config reload (startTestBackend, rootConfig.update as the file watcher, real example servers, SDK client)', () => {
  let servers: Record<'a' | 'b' | 'c', ExampleMcpServer>;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let rootConfig: ReturnType<typeof mockServices.rootConfig>;
  let client: Client;
  let transport: StreamableHTTPClientTransport;
  let endpoint: string;
  let marker: NotificationMarker;
  const listChanged: number[] = [];

  const entry = (name: string, url: string, extra: JsonObject = {}): JsonObject => ({
    name,
    url,
    ...extra,
  });
  const setServers = (list: JsonObject[]) =>
    rootConfig.update({
      data: {
        mcpBroker: {
          servers: list,
          reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
          // No trailing notifications: everything is sent before the marker that follows it.
          coalesceWindow: { milliseconds: 0 },
        },
      },
    });
  const toolNames = async () => (await client.listTools()).tools.map(t => t.name);

  beforeAll(async () => {
    servers = {
      a: await startExampleMcpServer({ port: 0 }),
      b: await startExampleMcpServer({ port: 0 }),
      c: await startExampleMcpServer({ port: 0 }),
    };
    rootConfig = mockServices.rootConfig({ data: {} });
    setServers([entry('a', servers.a.url)]);
    ({ server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
      ],
    }));
    endpoint = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker/mcp`;
    await waitFor(() => servers.a.sessionCount() === 1, 'the broker to connect to a');
    client = new Client(
      { name: 'reload-test', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      listChanged.push(Date.now());
    });
    // c takes part from the first test on and never changes: its prompts/list_changed marks
    // the point before which every notification has reached the client.
    marker = notificationMarker(client, async () => {
      await waitFor(() => servers.c.openEventStreams() === 1, 'the broker’s event stream to c');
      servers.c.announcePromptsChanged();
    });
    transport = new StreamableHTTPClientTransport(new URL(endpoint));
    await client.connect(transport);
    await waitFor(async () => (await toolNames()).includes('a_confirm'), 'a’s tools');
    // connect() resolves before the SDK's GET stream is open: wait until the broker has it.
    const statusUrl = endpoint.replace(/\/mcp$/, '/status');
    await waitFor(
      async () => (await (await fetch(statusUrl)).json()).clients.eventStreams === 1,
      'the client’s event stream',
    );
  }, 30_000);

  afterAll(async () => {
    await client?.close();
    await http?.stop?.();
    await Promise.all(Object.values(servers ?? {}).map(s => s.close()));
  });

  it('connects servers added at runtime; clients get ONE tools/list_changed for two added servers', async () => {
    listChanged.length = 0;
    setServers([
      entry('a', servers.a.url),
      entry('b', servers.b.url),
      entry('c', servers.c.url, { toolPrefix: 'c-' }),
    ]);
    await waitFor(async () => {
      const names = await toolNames();
      return names.includes('b_confirm') && names.includes('c-confirm');
    }, 'the added servers’ tools');
    await waitFor(() => listChanged.length >= 1, 'tools/list_changed');
    await marker.passThrough();
    expect(listChanged).toHaveLength(1);
    expect(servers.b.sessionCount()).toBe(1);
    expect(servers.c.sessionCount()).toBe(1);
  }, 15_000);

  it('routes an elicitation answer to a server added at runtime (the live server set, not the start-up config)', async () => {
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept',
      content: { confirmed: true },
    }));
    const result = await client.callTool({
      name: 'b_confirm',
      arguments: { question: 'Ship it?' },
    });
    expect(result.structuredContent).toEqual({ action: 'accept', content: { confirmed: true } });
  }, 15_000);

  it('removes a server: its tools go, its sessions close, a pending elicitation for it answers 404', async () => {
    let gatewayId: string | number | undefined;
    let answer!: (result: ElicitResult) => void;
    client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      gatewayId = extra.requestId;
      return new Promise<ElicitResult>(resolve => {
        answer = resolve;
      });
    });
    const call = client
      .callTool({ name: 'b_confirm', arguments: { question: 'Ship it?' } })
      .catch(e => e);
    await waitFor(() => gatewayId !== undefined, 'the elicitation request');
    expect(String(gatewayId)).toMatch(/^b:/);
    // The broker's own session and the client's backend session.
    expect(servers.b.sessionCount()).toBe(2);

    listChanged.length = 0;
    setServers([entry('a', servers.a.url), entry('c', servers.c.url, { toolPrefix: 'c-' })]);
    await waitFor(
      async () => !(await toolNames()).some(n => n.startsWith('b_')),
      'b’s tools to go',
    );
    await waitFor(() => servers.b.sessionCount() === 0, 'b’s sessions to close');
    await waitFor(() => listChanged.length === 1, 'tools/list_changed');

    const late = await fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': transport.protocolVersion ?? '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: gatewayId,
        result: { action: 'accept', content: { confirmed: true } },
      }),
    });
    expect(late.status).toBe(404);
    expect((await late.json()).error.message).toBeDefined();
    answer({ action: 'decline' });
    const outcome = await call;
    expect((outcome as Error).message).toMatch(/removed from the broker/);
    await marker.passThrough();
    expect(listChanged).toHaveLength(1);
  }, 15_000);

  it('reconnects a changed server (url and toolPrefix) and closes the old connection', async () => {
    listChanged.length = 0;
    expect(servers.a.sessionCount()).toBe(1);
    // 'a' now points at b's process with another prefix; c is unchanged and keeps its session.
    setServers([
      entry('a', servers.b.url, { toolPrefix: 'alpha_' }),
      entry('c', servers.c.url, { toolPrefix: 'c-' }),
    ]);
    await waitFor(async () => {
      const names = await toolNames();
      return names.includes('alpha_confirm') && !names.includes('a_confirm');
    }, 'the renamed tools');
    await waitFor(() => servers.a.sessionCount() === 0, 'the old connection to close');
    expect(servers.b.sessionCount()).toBe(1);
    expect(servers.c.sessionCount()).toBe(1);
    await marker.passThrough();
    expect(listChanged).toHaveLength(1);

    const status = await (await fetch(endpoint.replace(/\/mcp$/, '/status'))).json();
    expect(status.backends).toEqual([
      expect.objectContaining({
        name: 'a',
        url: servers.b.url,
        state: 'connected',
        source: { type: 'config' },
      }),
      expect.objectContaining({ name: 'c', source: { type: 'config' } }),
    ]);
  }, 15_000);
});
