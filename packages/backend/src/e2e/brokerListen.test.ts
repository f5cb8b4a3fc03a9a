/*
 * `subscriptions/listen` end to end: the official SDK v2 client (`@modelcontextprotocol/client`
 * 2.4.0, pinned to 2026-07-28) and raw HTTP against the broker in the real backend process, with
 * a scripted 2025-11-25 MCP server whose change events the broker relays from its GET stream
 * (the same per-backend event connection that feeds the session clients' GET streams).
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
  type McpSubscription,
} from '@modelcontextprotocol/client';
// eslint-disable-next-line @backstage/no-forbidden-package-imports -- the broker's test-only server
import {
  ScriptedMcpServer,
  startScriptedMcpServer,
} from '@devportal/plugin-mcp-broker-backend/src/testing/scriptedMcpServer';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';

const MODERN = '2026-07-28';
const SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

interface ListenClient {
  client: ModernClient;
  /** Change notification methods in the order they arrived. */
  received: string[];
  subscription: McpSubscription;
}

describe('subscriptions/listen through the broker (SDK v2 client, real backend process)', () => {
  let backend: BackendProcess;
  let scripted: ScriptedMcpServer;
  let carol: string;
  const clients: ModernClient[] = [];

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;

  /** POSTs a `subscriptions/listen` request as a 2026-07-28 client would, without an SDK. */
  const rawListen = (id: string | number, notifications: unknown, token = carol) =>
    fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${token}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': MODERN,
        'Mcp-Method': 'subscriptions/listen',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id,
        method: 'subscriptions/listen',
        params: {
          _meta: {
            'io.modelcontextprotocol/protocolVersion': MODERN,
            'io.modelcontextprotocol/clientCapabilities': {},
          },
          notifications,
        },
      }),
    });

  async function listenStreams(): Promise<number> {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
      headers: { Authorization: `Bearer ${carol}` },
    });
    const body = (await response.json()) as { clients: { listenStreams: number } };
    return body.clients.listenStreams;
  }

  async function listen(filter: Record<string, boolean>): Promise<ListenClient> {
    const client = new ModernClient(
      { name: 'listen-e2e', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: { pin: MODERN } } },
    );
    clients.push(client);
    const received: string[] = [];
    for (const kind of ['tools', 'prompts', 'resources'] as const) {
      client.setNotificationHandler(`notifications/${kind}/list_changed`, async () => {
        received.push(`notifications/${kind}/list_changed`);
      });
    }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(mcpUrl()), {
        requestInit: { headers: { Authorization: `Bearer ${carol}` } },
      }),
    );
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN);
    const subscription = await client.listen(filter);
    return { client, received, subscription };
  }

  beforeAll(async () => {
    scripted = await startScriptedMcpServer({
      tools: ['echo'],
      capabilities: { tools: { listChanged: true }, prompts: { listChanged: true } },
    });
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [{ name: 'scripted', url: scripted.url }],
          coalesceWindow: { milliseconds: 0 },
          keepAlive: { seconds: 1 },
          // Listen streams are limited with the session limits' numbers (per replica).
          sessionLimits: { perPrincipal: 3 },
        },
      },
    });
    carol = await backend.signIn('carol');
    await waitFor(() => scripted.openEventStreams() === 1, 30_000, 'the broker’s event stream');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close().catch(() => {})));
    await backend?.stop();
    await scripted?.close();
  }, 30_000);

  it('acknowledges, then relays a backend’s tools change to a tools stream but not to a prompts stream', async () => {
    const tools = await listen({ toolsListChanged: true });
    const prompts = await listen({ promptsListChanged: true, resourcesListChanged: true });
    expect(tools.subscription.honoredFilter).toEqual({ toolsListChanged: true });
    // No backend advertises resources.listChanged: that kind is left out of the acknowledgement.
    expect(prompts.subscription.honoredFilter).toEqual({ promptsListChanged: true });

    scripted.sendListChanged('tools');
    await waitFor(
      () => tools.received.includes('notifications/tools/list_changed'),
      10_000,
      'the tools change on the tools stream',
    );
    // The marker: a later prompts change reaches the prompts stream, and nothing came before it.
    scripted.sendListChanged('prompts');
    await waitFor(() => prompts.received.length > 0, 10_000, 'the prompts change');
    expect(prompts.received).toEqual(['notifications/prompts/list_changed']);
    expect(tools.received).toEqual(['notifications/tools/list_changed']);

    await tools.subscription.close();
    await prompts.subscription.close();
    await expect(tools.subscription.closed).resolves.toBe('local');
    await waitFor(async () => (await listenStreams()) === 0, 10_000, 'closed streams to go');
  });

  it('tags every message with the listen request id and keeps the stream alive with comments', async () => {
    const response = await rawListen('raw-7', { toolsListChanged: true });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const readUntil = async (pattern: RegExp) => {
      while (!pattern.test(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${pattern}:\n${text}`);
        text += decoder.decode(value, { stream: true });
      }
    };
    await readUntil(/notifications\/subscriptions\/acknowledged/);
    await readUntil(/: keep-alive\n\n/);
    scripted.sendListChanged('tools');
    await readUntil(/notifications\/tools\/list_changed[^\n]*\n\n/);
    const messages = text
      .split('\n')
      .filter(line => line.startsWith('data: '))
      .map(line => JSON.parse(line.slice('data: '.length)));
    expect(messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/subscriptions/acknowledged',
        params: {
          _meta: { [SUBSCRIPTION_ID]: 'raw-7' },
          notifications: { toolsListChanged: true },
        },
      },
      {
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
        params: { _meta: { [SUBSCRIPTION_ID]: 'raw-7' } },
      },
    ]);
    await reader.cancel();
    await waitFor(async () => (await listenStreams()) === 0, 10_000, 'the closed stream to go');
  });

  it('refuses a malformed filter with -32602 saying what to send', async () => {
    const response = await rawListen(1, { toolsListChanged: 'yes' });
    expect(response.status).toBe(400);
    const body = await response.json();
    expect(body.error.code).toBe(-32602);
    expect(body.error.message).toContain('params.notifications.toolsListChanged');
  });

  it('refuses a listen stream over the per-principal limit with 429 naming the setting', async () => {
    const open = await Promise.all([1, 2, 3].map(id => rawListen(id, { toolsListChanged: true })));
    expect(open.map(response => response.status)).toEqual([200, 200, 200]);
    const refused = await rawListen(4, { toolsListChanged: true });
    expect(refused.status).toBe(429);
    expect((await refused.json()).error.message).toContain('mcpBroker.sessionLimits.perPrincipal');
    await Promise.all(open.map(response => response.body!.cancel()));
    await waitFor(async () => (await listenStreams()) === 0, 10_000, 'the closed streams to go');
    const again = await rawListen(5, { toolsListChanged: true });
    expect(again.status).toBe(200);
    await again.body!.cancel();
    await waitFor(async () => (await listenStreams()) === 0, 10_000, 'the last stream to go');
  });

  it('refuses a listen stream to a user without mcp-broker.session.create, opening nothing', async () => {
    // erin has no MCP role in the development RBAC policy (examples/rbac-policy.csv).
    const erin = await backend.signIn('erin');
    const response = await rawListen(2, { toolsListChanged: true }, erin);
    expect(response.status).toBe(403);
    const body = await response.json();
    expect(body.error.message).toContain('mcp-broker.session.create');
    expect(await listenStreams()).toBe(0);
  });

  // Last: it stops the backend process.
  it('ends an open stream with the complete result when the backend process shuts down', async () => {
    const listening = await listen({ toolsListChanged: true });
    await waitFor(async () => (await listenStreams()) === 1, 10_000, 'the listen stream');
    await backend.stop();
    await expect(listening.subscription.closed).resolves.toBe('graceful');
  });
});
