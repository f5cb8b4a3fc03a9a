/*
 * A mixed fleet through the real backend process: the legacy example server (2025-11-25, SDK
 * 1.x) and the modern one (2026-07-28, SDK v2 `createMcpHandler`) behind the broker, used by a
 * legacy client (SDK 1.x). The broker finds each backend's era, lists the modern backend over
 * stateless requests, hears its changes over `subscriptions/listen`, and shows both eras on
 * /status. (Tool calls to a modern backend still go the per-client session path, which the SDK's
 * stateless 2025 fallback serves; the 2026-07-28 call path is the next step of #18.)
 */
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitFor } from './brokerTestKit';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';

interface BackendStatus {
  name: string;
  state: string;
  eventStream: string;
  era?: string;
  eraDetectedAt?: string;
  protocolVersion?: string;
}

describe('a mixed fleet (2025-11-25 and 2026-07-28 backends) in the real backend process', () => {
  let fleet: ExampleFleet;
  let backend: BackendProcess;
  let carol: string;
  let client: BrokerClient | undefined;

  async function status(): Promise<{
    backends: BackendStatus[];
    clients: { eventStreams: number };
  }> {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
      headers: { Authorization: `Bearer ${carol}` },
    });
    expect(response.status).toBe(200);
    return response.json();
  }

  beforeAll(async () => {
    fleet = await startExampleFleet();
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: fleet.servers,
          reconnect: { initialDelay: { milliseconds: 100 }, maxDelay: { seconds: 1 } },
          coalesceWindow: { milliseconds: 50 },
        },
      },
    });
    // Carol (portal-admin) may use every tool: this is about eras, not access control.
    carol = await backend.signIn('carol');
    await waitFor(
      async () =>
        (await status()).backends.every(b => b.state === 'connected' && b.eventStream === 'open'),
      30_000,
      'both backends to connect with their event streams',
    );
  }, 120_000);

  afterEach(async () => {
    await client?.close();
    client = undefined;
  });

  afterAll(async () => {
    await backend?.stop();
    await fleet?.close();
  }, 30_000);

  it('shows each backend’s era on /status', async () => {
    const backends = (await status()).backends;
    expect(backends).toEqual([
      expect.objectContaining({ name: 'example', era: 'legacy', protocolVersion: '2025-11-25' }),
      expect.objectContaining({ name: 'modern', era: 'modern', protocolVersion: '2026-07-28' }),
    ]);
    for (const b of backends) expect(Date.parse(b.eraDetectedAt!)).not.toBeNaN();
    expect(fleet.modern.listenStreams()).toBe(1);
  });

  it('gives a legacy client the modern backend’s tools, prompt and resource', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    const names = (await client.client.listTools()).tools.map(t => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'example_echo',
        'example_confirm',
        'modern_echo',
        'modern_count',
        'modern_add_tool',
      ]),
    );
    const echo = (await client.client.listTools()).tools.find(t => t.name === 'modern_echo');
    expect(echo?.annotations).toMatchObject({ readOnlyHint: true });

    // prompts/get and resources/read go over the broker's own stateless requests.
    const prompt = await client.client.getPrompt({
      name: 'modern_greeting',
      arguments: { name: 'Ada' },
    });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Hello, Ada!' } },
    ]);
    const resource = await client.client.readResource({ uri: 'example://modern/readme' });
    expect(resource.contents[0]).toMatchObject({ uri: 'example://modern/readme' });
  });

  it('calls a modern backend’s tool with progress through the existing tool-call path', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    const progress: number[] = [];
    const result = await client.client.callTool(
      { name: 'modern_count', arguments: { steps: 3, delayMs: 10 } },
      undefined,
      { onprogress: p => progress.push(p.progress) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
    expect(progress).toEqual([1, 2, 3]);
  });

  it('tells a legacy client when the modern backend’s tools change (over subscriptions/listen)', async () => {
    const before = (await status()).clients.eventStreams;
    client = await connectBrokerClient(backend.baseUrl, carol);
    await waitFor(
      async () => (await status()).clients.eventStreams > before,
      10_000,
      'the client’s GET stream',
    );
    fleet.modern.addTool('fresh');
    await waitFor(
      () => client!.notifications.includes('notifications/tools/list_changed'),
      10_000,
      'tools/list_changed at the client',
    );
    const names = (await client.client.listTools()).tools.map(t => t.name);
    expect(names).toContain('modern_fresh');
  });
});
