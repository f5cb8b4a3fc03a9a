/*
 * McpBroker.setServers with real MCP servers: clients hear one list_changed per kind for a change
 * of the server set, however many servers it adds or removes and however long each takes to
 * list. One backend sits behind a small HTTP relay that delays every request (a slow server),
 * so an un-batched broker would notify once per server. Client GET streams are recorded in
 * memory (a test double of ClientEventStream). "Nothing else arrives" is an event: one more
 * server (the marker) is added and its announcement awaited.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { startUnreachableServer, type UnreachableServer } from '@internal/test-mcp-backends';
import { BrokerServerConfig, readBrokerConfig } from '../config';
import { createStreamingToolCallHandler } from '../calls';
import type { JsonRpcMessage } from '../protocol/jsonRpc';
import { McpBroker } from './McpBroker';
import type { ClientEventStream } from '../types';
import { waitFor } from '../testing/waitFor';
import { forwardHttp } from '../testing/forwardHttp';

/** Relays HTTP to `target`, answering every request `delayMs` late (streams pass through). */
async function startSlowRelay(target: string, delayMs: number) {
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    setTimeout(() => forwardHttp(upstream, req, res), delayMs);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`,
    close: () =>
      new Promise<void>(resolve => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('McpBroker server set changes (real example servers, one behind a slow relay; client streams recorded in memory)', () => {
  let fast: ExampleMcpServer;
  let slowBackend: ExampleMcpServer;
  let slow: Awaited<ReturnType<typeof startSlowRelay>>;
  let marker: ExampleMcpServer;
  let nowhere: UnreachableServer;
  let broker: McpBroker;
  let sent: Array<{ method: string; toolsAtSend: string[] }>;

  const server = (name: string, url: string): BrokerServerConfig => ({
    name,
    url,
    toolPrefix: `${name}_`,
    headers: {},
  });
  const tools = () => broker.catalog().tools.map(t => t.name as string);
  /** How many notifications of each method were sent (the example server has tools, resources and prompts). */
  const perKind = (notifications = sent) => {
    const counts: Record<string, number> = {};
    for (const { method } of notifications) counts[method] = (counts[method] ?? 0) + 1;
    return counts;
  };
  /**
   * An event-driven "nothing else arrives": adds one more server (the marker) to `servers` and
   * waits for its announcement. Notifications go out in order, so whatever the change before it
   * still had to send was sent before; returns those.
   */
  const sentBeforeMarker = async (servers: BrokerServerConfig[]) => {
    broker.setServers([...servers, server('marker', marker.url)]);
    const isMarker = (n: { toolsAtSend: string[] }) => n.toolsAtSend.includes('marker_echo');
    // Its tools and prompts are new (its resources clash with fast's, so they may not be).
    const markerKinds = () => new Set(sent.filter(isMarker).map(n => n.method));
    await waitFor(
      () =>
        markerKinds().has('notifications/tools/list_changed') &&
        markerKinds().has('notifications/prompts/list_changed'),
      'the marker’s announcement',
    );
    return sent.filter(n => !isMarker(n));
  };
  const ONE_PER_KIND = {
    'notifications/tools/list_changed': 1,
    'notifications/resources/list_changed': 1,
    'notifications/prompts/list_changed': 1,
  };

  beforeEach(async () => {
    fast = await startExampleMcpServer({ port: 0 });
    slowBackend = await startExampleMcpServer({ port: 0 });
    slow = await startSlowRelay(slowBackend.url, 150);
    marker = await startExampleMcpServer({ port: 0 });
    nowhere = await startUnreachableServer();
    broker = McpBroker.create({
      config: readBrokerConfig(
        new ConfigReader({
          mcpBroker: {
            servers: [],
            reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
            coalesceWindow: { milliseconds: 20 },
          },
        }),
      ),
      logger: mockServices.logger.mock(),
      toolCallHandlerFactory: deps => createStreamingToolCallHandler(deps),
    });
    const session = await broker.sessions.create({
      principal: 'user:default/alice',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    const controller = new AbortController();
    sent = [];
    const stream: ClientEventStream = {
      send: (message: JsonRpcMessage) => {
        sent.push({ method: (message as { method: string }).method, toolsAtSend: tools() });
        return true;
      },
      close: () => controller.abort(),
      get closed() {
        return controller.signal.aborted;
      },
      signal: controller.signal,
    };
    session.eventStream = stream;
  });

  afterEach(async () => {
    await broker.close();
    await slow.close();
    await Promise.all([fast.close(), slowBackend.close(), marker.close(), nowhere.close()]);
  });

  it('adding a fast and a slow server sends one list_changed per kind, after both have listed', async () => {
    broker.setServers([server('fast', fast.url), server('slow', slow.url)]);
    await waitFor(
      () => tools().includes('fast_echo') && tools().includes('slow_echo'),
      'both servers’ tools',
    );
    await waitFor(() => sent.length > 0, 'the notification');
    const announced = await sentBeforeMarker([server('fast', fast.url), server('slow', slow.url)]);
    expect(perKind(announced)).toEqual(ONE_PER_KIND);
    for (const { toolsAtSend } of announced) {
      expect(toolsAtSend).toEqual(expect.arrayContaining(['fast_echo', 'slow_echo']));
    }
  }, 15_000);

  it('a server that cannot be reached does not hold back the others’ announcement', async () => {
    broker.setServers([server('fast', fast.url), server('nowhere', nowhere.url)]);
    await waitFor(() => sent.length > 0, 'the notification', 3000);
    expect(sent[0].toolsAtSend).toContain('fast_echo');
    expect(broker.status().backends.find(b => b.name === 'nowhere')!.state).toMatch(
      /backing-off|connecting/,
    );
  }, 10_000);

  it('removing two servers sends one list_changed per kind and closes both connections', async () => {
    broker.setServers([server('fast', fast.url), server('slow', slow.url)]);
    await waitFor(() => sent.length === 3, 'the first announcement');
    await sentBeforeMarker([server('fast', fast.url), server('slow', slow.url)]);
    sent.length = 0;
    broker.setServers([]);
    expect(tools()).toEqual([]);
    await waitFor(
      () => fast.sessionCount() === 0 && slowBackend.sessionCount() === 0,
      'both sessions to close',
    );
    const removed = await sentBeforeMarker([]);
    expect(perKind(removed)).toEqual(ONE_PER_KIND);
    for (const { toolsAtSend } of removed) expect(toolsAtSend).toEqual([]);
  }, 15_000);
});
