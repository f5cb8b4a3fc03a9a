/*
 * GET /servers and the `mcp-broker` events topic (contract mcp-access §2.6–§2.7) through the real
 * plugin: startTestBackend (auth mocked: a request without a token counts as a signed-in user),
 * real example MCP servers, mockServices.rootConfig's update() standing in for Backstage's file
 * watcher, and a module of the plugin that subscribes to the topic on the plugin's events
 * service as the catalog module does.
 */
import type { AddressInfo } from 'node:net';
import {
  coreServices,
  createBackendModule,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import type { JsonObject } from '@backstage/types';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import {
  MCP_BROKER_EVENTS_TOPIC,
  type McpBrokerEventPayload,
  type McpServerDescription,
} from '@devportal/plugin-mcp-broker-common';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

const SECRET = 'Bearer s3cret-broker-credential';

describe('mcpBrokerPlugin server descriptions and events (startTestBackend, real example servers)', () => {
  let servers: Record<'a' | 'b', ExampleMcpServer>;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let rootConfig: ReturnType<typeof mockServices.rootConfig>;
  let base: string;
  let decision: AuthorizeResult.ALLOW | AuthorizeResult.DENY = AuthorizeResult.ALLOW;
  const received: McpBrokerEventPayload[] = [];

  const setServers = (list: JsonObject[]) =>
    rootConfig.update({
      data: {
        mcpBroker: {
          servers: list,
          reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
        },
      },
    });
  const entryA = () => ({
    name: 'a',
    url: servers.a.url,
    owner: 'Payments-Team',
    headers: { Authorization: SECRET },
  });
  const entryB = () => ({ name: 'b', url: servers.b.url, owner: 'user:default/bob' });
  const get = (path: string, headers: Record<string, string> = {}) =>
    fetch(`${base}${path}`, { headers });

  beforeAll(async () => {
    servers = {
      a: await startExampleMcpServer({ port: 0 }),
      b: await startExampleMcpServer({ port: 0 }),
    };
    rootConfig = mockServices.rootConfig({ data: {} });
    setServers([entryA(), entryB()]);
    const recorder = createBackendModule({
      pluginId: 'mcp-broker',
      moduleId: 'test-event-recorder',
      register(env) {
        env.registerInit({
          deps: { events: eventsServiceRef },
          async init({ events }) {
            await events.subscribe({
              id: 'test-event-recorder',
              topics: [MCP_BROKER_EVENTS_TOPIC],
              onEvent: async params => {
                received.push(params.eventPayload as McpBrokerEventPayload);
              },
            });
          },
        });
      },
    });
    const allowAll = mockServices.permissions();
    ({ server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        recorder,
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
        // The decision of plain `authorize` calls is switchable; the MCP lists stay allowed.
        createServiceFactory({
          service: coreServices.permissions,
          deps: {},
          factory: () => ({
            authorize: async (requests: any[]) => requests.map(() => ({ result: decision })),
            authorizeConditional: (requests: any, options: any) =>
              allowAll.authorizeConditional(requests, options),
          }),
        }),
      ],
    }));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker`;
  }, 30_000);

  afterAll(async () => {
    await http?.stop?.();
    await Promise.all(Object.values(servers ?? {}).map(s => s.close()));
  });

  it('describes every server in config order with its owner, source and tools, and no credential', async () => {
    const body = await waitFor(async () => {
      const answer = await (await get('/servers')).json();
      return answer.items?.every((d: McpServerDescription) => d.tools.length > 0) && answer;
    }, 'both servers to be listed');
    expect(body.items.map((d: McpServerDescription) => d.server)).toEqual(['a', 'b']);
    const [a, b] = body.items as McpServerDescription[];
    expect(a).toMatchObject({
      server: 'a',
      kind: 'server',
      toolPrefix: 'a_',
      owner: 'group:default/payments-team',
      source: { type: 'config' },
    });
    expect(b.owner).toBe('user:default/bob');
    expect(a.tools).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          name: 'echo',
          brokerName: 'a_echo',
          inputSchema: expect.objectContaining({ type: 'object' }),
        }),
      ]),
    );
    expect(a.prompts.map(p => p.brokerName)).toContain('a_greeting');
    const text = JSON.stringify(body);
    expect(text).not.toContain('s3cret');
    expect(text).not.toContain(servers.a.url);
  });

  it('answers one server by kind and name, and 404 or 400 naming what is wrong', async () => {
    const one = await get('/servers/server/b');
    expect(one.status).toBe(200);
    expect((await one.json()).server).toBe('b');
    const unknown = await get('/servers/server/nope');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toMatch(/no server named "nope"/);
    const endpoint = await get('/servers/endpoint/a');
    expect(endpoint.status).toBe(404);
    const badKind = await get('/servers/tool/a');
    expect(badKind.status).toBe(400);
    expect((await badKind.json()).error.message).toMatch(/kind must be "server" or "endpoint"/);
  });

  it('answers 401 without credentials and 403 naming the permission when denied', async () => {
    const anonymous = await get('/servers', { authorization: mockCredentials.none.header() });
    expect(anonymous.status).toBe(401);
    decision = AuthorizeResult.DENY;
    try {
      const denied = await get('/servers');
      expect(denied.status).toBe(403);
      expect((await denied.json()).error.message).toContain('mcp-broker.server.read');
      expect((await get('/servers/server/a')).status).toBe(403);
    } finally {
      decision = AuthorizeResult.ALLOW;
    }
  });

  it('publishes server.added for each server, then server.updated and server.removed on a config reload', async () => {
    await waitFor(
      () => ['a', 'b'].every(n => received.some(e => e.server.name === n)),
      'the added events',
      10_000,
    );
    expect(received.filter(e => e.type === 'server.added').map(e => e.server)).toEqual(
      expect.arrayContaining([
        { kind: 'server', name: 'a' },
        { kind: 'server', name: 'b' },
      ]),
    );
    received.length = 0;
    setServers([{ ...entryA(), owner: 'group:default/platform' }]);
    await waitFor(
      () =>
        received.some(e => e.type === 'server.removed' && e.server.name === 'b') &&
        received.some(e => e.type === 'server.updated' && e.server.name === 'a'),
      'b’s removal and a’s owner change',
      10_000,
    );
    expect((await get('/servers/server/b')).status).toBe(404);
    const a = await (await get('/servers/server/a')).json();
    expect(a.owner).toBe('group:default/platform');
  }, 20_000);
});
