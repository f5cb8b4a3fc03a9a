/*
 * The provider against the real broker plugin (startTestBackend, real example MCP servers,
 * mockServices.rootConfig's update() standing in for Backstage's file watcher) through the real
 * McpBrokerClient, with a recording catalog connection in place of the catalog (the real catalog
 * runs in packages/backend's mcpCatalog end-to-end test).
 */
import type { AddressInfo } from 'node:net';
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { EntityProviderMutation } from '@backstage/plugin-catalog-node';
import type { JsonObject } from '@backstage/types';
// The real broker the module reads, in the test only (the module itself imports no plugin).
// eslint-disable-next-line @backstage/no-mixed-plugin-imports
import mcpBrokerPlugin from '@devportal/plugin-mcp-broker-backend';
import { McpBrokerClient } from '@devportal/plugin-mcp-broker-common';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { McpBrokerEntityProvider } from './McpBrokerEntityProvider';

async function waitFor<T>(check: () => T | Promise<T>, what: string): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}

describe('McpBrokerEntityProvider (real broker plugin and example servers, recording catalog connection)', () => {
  let servers: Record<'a' | 'b', ExampleMcpServer>;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let rootConfig: ReturnType<typeof mockServices.rootConfig>;
  let provider: McpBrokerEntityProvider;
  let mutations: EntityProviderMutation[];
  const reads: string[] = [];

  const setServers = (list: JsonObject[]) =>
    rootConfig.update({ data: { mcpBroker: { servers: list } } });
  const entryA = () => ({ name: 'a', url: servers.a.url, owner: 'group:default/team-a' });
  const entryB = () => ({ name: 'b', url: servers.b.url });

  beforeAll(async () => {
    servers = {
      a: await startExampleMcpServer({ port: 0 }),
      b: await startExampleMcpServer({ port: 0 }),
    };
    rootConfig = mockServices.rootConfig({ data: {} });
    setServers([entryA(), entryB()]);
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
  }, 30_000);

  afterAll(async () => {
    await http?.stop?.();
    await Promise.all(Object.values(servers ?? {}).map(s => s.close()));
  });

  beforeEach(async () => {
    mutations = [];
    reads.length = 0;
    const base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker`;
    provider = McpBrokerEntityProvider.create({
      // The real fetch, counting the reads.
      client: new McpBrokerClient({
        baseUrl: base,
        fetch: (input, init) => {
          reads.push(new URL(String(input)).pathname);
          return fetch(input, init);
        },
      }),
      logger: mockServices.logger.mock(),
      entityOptions: {
        toolsPageUrlTemplate: 'http://app/mcp?server={name}',
        mcpEndpointUrl: `${base}/mcp`,
        defaultOwner: 'group:default/mcp-admins',
        location: `mcp-broker:${base}`,
      },
    });
    await provider.connect({
      applyMutation: async mutation => {
        mutations.push(mutation);
      },
      refresh: async () => undefined,
    });
    await waitFor(async () => {
      await provider.refresh();
      const last = mutations.at(-1) as Extract<EntityProviderMutation, { type: 'full' }>;
      return (
        last.entities.length === 2 &&
        last.entities.every(e => JSON.parse(e.entity.spec!.definition as string).tools.length > 0)
      );
    }, 'both servers to be listed');
  });

  it('full sync: one entity per server, with the broker’s owner or the default, and the tools', () => {
    const full = mutations.at(-1) as Extract<EntityProviderMutation, { type: 'full' }>;
    const byName = new Map(full.entities.map(e => [e.entity.metadata.name, e]));
    expect([...byName.keys()]).toEqual(['mcp-server-a', 'mcp-server-b']);
    expect(byName.get('mcp-server-a')!.locationKey).toBe('mcp-broker-servers:server/a');
    expect(byName.get('mcp-server-a')!.entity.spec!.owner).toBe('group:default/team-a');
    expect(byName.get('mcp-server-b')!.entity.spec!.owner).toBe('group:default/mcp-admins');
    const definition = JSON.parse(byName.get('mcp-server-a')!.entity.spec!.definition as string);
    expect(definition.tools.map((t: { brokerName: string }) => t.brokerName)).toContain('a_echo');
  });

  it('coalesces a burst of 10 events for one server, arriving while a sync runs, into one read and one delta', async () => {
    mutations.length = 0;
    reads.length = 0;
    const sync = provider.refresh();
    await Promise.all(
      Array.from({ length: 10 }, () =>
        provider.onBrokerEvent({ type: 'server.updated', server: { kind: 'server', name: 'a' } }),
      ),
    );
    await sync;
    await provider.drain();
    expect(reads).toEqual(['/api/mcp-broker/servers', '/api/mcp-broker/servers/server/a']);
    expect(mutations.map(m => m.type)).toEqual(['full', 'delta']);
    expect(mutations[1]).toMatchObject({
      added: [{ entity: { metadata: { name: 'mcp-server-a' } } }],
      removed: [],
    });
  });

  it('reads again for an event that arrives after the previous read of that server began', async () => {
    reads.length = 0;
    const first = provider.onBrokerEvent({
      type: 'server.updated',
      server: { kind: 'server', name: 'a' },
    });
    await first;
    await new Promise(resolve => setImmediate(resolve));
    await provider.onBrokerEvent({ type: 'server.updated', server: { kind: 'server', name: 'a' } });
    await provider.drain();
    expect(reads).toEqual(['/api/mcp-broker/servers/server/a', '/api/mcp-broker/servers/server/a']);
  });

  it('ignores payloads that are not broker events', async () => {
    mutations.length = 0;
    await provider.onBrokerEvent({ type: 'apiproduct.created', product: {} });
    await provider.onBrokerEvent({ type: 'server.added', server: { kind: 'tool', name: 'a' } });
    await provider.drain();
    expect(mutations).toEqual([]);
  });

  it('removes the entity of a server the broker no longer has (404 on re-read), and the next full sync agrees', async () => {
    setServers([entryA()]);
    try {
      await waitFor(
        async () =>
          (
            await fetch(
              `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker/servers/server/b`,
            )
          ).status === 404,
        'the broker to drop b',
      );
      mutations.length = 0;
      await provider.onBrokerEvent({
        type: 'server.removed',
        server: { kind: 'server', name: 'b' },
      });
      await provider.drain();
      expect(mutations).toEqual([
        {
          type: 'delta',
          added: [],
          removed: [
            { entityRef: 'api:default/mcp-server-b', locationKey: 'mcp-broker-servers:server/b' },
          ],
        },
      ]);
      await provider.refresh();
      const full = mutations.at(-1) as Extract<EntityProviderMutation, { type: 'full' }>;
      expect(full.entities.map(e => e.entity.metadata.name)).toEqual(['mcp-server-a']);
    } finally {
      setServers([entryA(), entryB()]);
    }
  }, 20_000);
});
