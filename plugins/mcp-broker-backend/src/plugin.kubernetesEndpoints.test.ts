/*
 * Curated endpoints from Kubernetes (docs/contracts/curated-endpoints.md §9) through the real
 * plugin: startTestBackend (auth mocked: a request without a token counts as a signed-in user),
 * the fake Kubernetes API server (no cluster runs here; the real @kubernetes/client-node talks to
 * it), the repository's example MCP server registered by two namespaces, the scripted server as
 * a config server, and the official SDK clients of both eras on the endpoint.
 */
import type { AddressInfo } from 'node:net';
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { FakeKubeApiServer, startFakeKubeApiServer } from '@internal/fake-kube-apiserver';
import * as k8s from '@kubernetes/client-node';
import {
  Client as ModernClient,
  StreamableHTTPClientTransport as ModernClientTransport,
} from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpBrokerPlugin } from './plugin';
import { SERVER_URL_ANNOTATION } from './discovery/registrationMapping';
import { VIRTUAL_SERVER_TITLE_ANNOTATION } from './discovery/virtualServerMapping';
import { ScriptedMcpServer, startScriptedMcpServer } from './testing/scriptedMcpServer';
import { waitFor } from './testing/waitFor';

const API = 'mcp.kuadrant.io/v1alpha1';

describe('curated endpoints from MCPVirtualServers (startTestBackend, fake Kubernetes API server, real MCP servers, SDK clients of both eras)', () => {
  let fake: FakeKubeApiServer;
  let example: ExampleMcpServer;
  let scripted: ScriptedMcpServer;
  let stop: () => Promise<void>;
  let base: string;
  let rootConfig: ReturnType<typeof mockServices.rootConfig>;
  let brokerConfig: JsonObject;
  const clients: Array<{ close(): Promise<void> }> = [];
  let custom: k8s.CustomObjectsApi;

  /** Creates a resource as its namespace's owners would (through the API server). */
  const create = (body: { kind: string; metadata: { namespace: string } }) =>
    custom.createNamespacedCustomObject({
      group: 'mcp.kuadrant.io',
      version: 'v1alpha1',
      namespace: body.metadata.namespace,
      plural: body.kind === 'MCPVirtualServer' ? 'mcpvirtualservers' : 'mcpserverregistrations',
      body,
    });

  const registration = (namespace: string, name: string, toolPrefix: string) => ({
    apiVersion: API,
    kind: 'MCPServerRegistration',
    metadata: { name, namespace, annotations: { [SERVER_URL_ANNOTATION]: example.url } },
    spec: { targetRef: { name: 'unused' }, toolPrefix },
  });
  const virtualServer = (namespace: string, name: string, spec: object, title?: string) => ({
    apiVersion: API,
    kind: 'MCPVirtualServer',
    metadata: {
      name,
      namespace,
      ...(title === undefined ? {} : { annotations: { [VIRTUAL_SERVER_TITLE_ANNOTATION]: title } }),
    },
    spec,
  });
  const accepted = (namespace: string, name: string) =>
    fake
      .getObject(API, 'MCPVirtualServer', namespace, name)
      ?.status?.conditions?.find((c: { type: string }) => c.type === 'Accepted');
  const status = async () =>
    (await (await fetch(`${base}/status`)).json()) as {
      backends: Array<{ name: string; state: string }>;
      registrations: {
        refused: Array<{
          kind: string;
          namespace: string;
          name: string;
          reason: string;
          message: string;
        }>;
      };
      endpoints: Array<{ name: string; servers: string[]; tools: number }>;
    };
  /** The HTTP status of an `initialize` on endpoint `name` (404: no such endpoint). */
  const initializeStatus = async (name: string) =>
    (
      await fetch(`${base}/endpoints/${name}/mcp`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: {
            protocolVersion: '2025-11-25',
            capabilities: {},
            clientInfo: { name: 'probe', version: '1.0.0' },
          },
        }),
      })
    ).status;
  const legacyClient = async (endpoint: string) => {
    const client = new Client({ name: 'k8s-endpoints', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/endpoints/${endpoint}/mcp`)),
    );
    clients.push(client);
    return client;
  };
  const modernClient = async (endpoint: string) => {
    const client = new ModernClient(
      { name: 'k8s-endpoints-modern', version: '1.0.0' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new ModernClientTransport(new URL(`${base}/endpoints/${endpoint}/mcp`)));
    clients.push(client);
    return client;
  };
  const names = (tools: Array<{ name: string }>) => tools.map(t => t.name).sort();

  beforeAll(async () => {
    fake = await startFakeKubeApiServer({ namespaces: ['team-a', 'team-b'] });
    [example, scripted] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      startScriptedMcpServer({ tools: ['lookup'] }),
    ]);
    fake.load([
      registration('team-a', 'tools', 'a_'),
      registration('team-b', 'tools', 'b_'),
      virtualServer(
        'team-a',
        'triage',
        { tools: ['a_echo', 'a_confirm'], description: 'Echo and confirm, nothing else.' },
        'Incident triage',
      ),
    ]);
    const kc = new k8s.KubeConfig();
    kc.loadFromString(fake.kubeConfigYaml);
    custom = kc.makeApiClient(k8s.CustomObjectsApi);
    brokerConfig = {
      servers: [{ name: 'cfg', url: scripted.url }],
      kubernetes: {
        kubeconfig: await fake.writeKubeConfigFile(),
        retry: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
      },
    };
    rootConfig = mockServices.rootConfig({ data: { mcpBroker: brokerConfig } });
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        createServiceFactory({
          service: coreServices.rootConfig,
          deps: {},
          factory: () => rootConfig,
        }),
      ],
    });
    stop = async () => server.stop?.();
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker`;
    await waitFor(
      async () => (await status()).backends.filter(b => b.state === 'connected').length === 3,
      'cfg, team-a-tools and team-b-tools to connect',
    );
    await waitFor(async () => (await initializeStatus('team-a-triage')) === 200, 'the endpoint');
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close().catch(() => undefined)));
    await stop?.();
    await Promise.all([fake?.close(), example?.close(), scripted?.close()]);
  });

  it('serves an accepted virtual server with exactly its tools, its title and instructions (2025-11-25 session)', async () => {
    const client = await legacyClient('team-a-triage');
    expect(names((await client.listTools()).tools)).toEqual(['a_confirm', 'a_echo']);
    expect(client.getServerVersion()).toMatchObject({
      name: 'backstage-mcp-broker/team-a-triage',
      title: 'Incident triage',
    });
    expect(client.getInstructions()).toBe('Echo and confirm, nothing else.');
    const echoed = await client.callTool({ name: 'a_echo', arguments: { message: 'k8s' } });
    expect(JSON.stringify(echoed.content)).toContain('k8s');
    // A tool of the same server that the virtual server does not name is unknown here.
    await expect(client.callTool({ name: 'a_count', arguments: {} })).rejects.toThrow();
    await waitFor(() => accepted('team-a', 'triage')?.status === 'True', 'Accepted=True');
    expect(accepted('team-a', 'triage')?.message).toContain(
      '/api/mcp-broker/endpoints/team-a-triage/mcp',
    );
  });

  it('serves it to 2026-07-28 clients as well', async () => {
    const client = await modernClient('team-a-triage');
    expect(names((await client.listTools()).tools)).toEqual(['a_confirm', 'a_echo']);
  });

  it("refuses one naming another namespace's tool or a config server's: nothing served, its condition and /status say why", async () => {
    await create(virtualServer('team-a', 'greedy', { tools: ['a_echo', 'b_echo'] }));
    await create(virtualServer('team-a', 'borrowed', { tools: ['cfg_lookup'] }));
    await waitFor(
      () => accepted('team-a', 'greedy')?.reason === 'ToolOutsideNamespace',
      'the refusal of greedy',
    );
    await waitFor(
      () => accepted('team-a', 'borrowed')?.reason === 'ToolOutsideNamespace',
      'the refusal of borrowed',
    );
    expect(accepted('team-a', 'greedy')).toMatchObject({ status: 'False' });
    expect(accepted('team-a', 'greedy')?.message).toContain('"b_echo"');
    const refused = (await status()).registrations.refused;
    expect(refused).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'MCPVirtualServer',
          namespace: 'team-a',
          name: 'greedy',
          reason: 'ToolOutsideNamespace',
        }),
        expect.objectContaining({ kind: 'MCPVirtualServer', name: 'borrowed' }),
      ]),
    );
    expect(await initializeStatus('team-a-greedy')).toBe(404);
    expect(await initializeStatus('team-a-borrowed')).toBe(404);
  });

  it('turns UnknownTool into accepted when the server registers later', async () => {
    await create(virtualServer('team-a', 'later', { tools: ['late_echo'] }));
    await waitFor(() => accepted('team-a', 'later')?.reason === 'UnknownTool', 'UnknownTool');
    expect(await initializeStatus('team-a-later')).toBe(404);
    await create(registration('team-a', 'late', 'late_'));
    await waitFor(() => accepted('team-a', 'later')?.status === 'True', 'Accepted=True', 10_000);
    await waitFor(async () => {
      const entry = (await status()).endpoints.find(e => e.name === 'team-a-later');
      return entry?.tools === 1;
    }, 'the endpoint to show late_echo');
    const client = await legacyClient('team-a-later');
    expect(names((await client.listTools()).tools)).toEqual(['late_echo']);
    expect((await status()).registrations.refused.map(r => r.name)).not.toContain('later');
  }, 15_000);

  it('keeps the Kubernetes endpoints through a config reload, and a config endpoint of the same name wins', async () => {
    rootConfig.update({
      data: {
        mcpBroker: {
          ...brokerConfig,
          endpoints: {
            'from-config': { servers: ['cfg'] },
            'team-a-later': { servers: ['cfg'], title: 'Config wins' },
          },
        },
      },
    });
    await waitFor(
      async () => (await initializeStatus('from-config')) === 200,
      'the config endpoint',
    );
    const client = await legacyClient('team-a-later');
    expect(client.getServerVersion()?.title).toBe('Config wins');
    expect(names((await client.listTools()).tools)).toEqual(['cfg_lookup']);
    const triage = await legacyClient('team-a-triage');
    expect(names((await triage.listTools()).tools)).toEqual(['a_confirm', 'a_echo']);
  });

  it('removes the endpoint when its virtual server is deleted: its path answers 404', async () => {
    await custom.deleteNamespacedCustomObject({
      group: 'mcp.kuadrant.io',
      version: 'v1alpha1',
      namespace: 'team-a',
      plural: 'mcpvirtualservers',
      name: 'triage',
    });
    await waitFor(async () => (await initializeStatus('team-a-triage')) === 404, 'the 404');
    expect((await status()).endpoints.map(e => e.name)).not.toContain('team-a-triage');
  });
});
