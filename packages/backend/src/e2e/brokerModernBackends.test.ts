/*
 * A mixed fleet through the real backend process: the legacy example server (2025-11-25, SDK
 * 1.x) and the modern one (2026-07-28, SDK v2 `createMcpHandler`) behind the broker, used by a
 * legacy client (SDK 1.x) and a modern one (SDK v2 pinned to 2026-07-28). The modern backend is
 * modern-only (`legacy: 'reject'`): the broker finds each backend's era, lists the modern backend
 * over stateless requests, hears its changes over `subscriptions/listen`, calls its tools
 * statelessly (progress, `input_required` asked of a legacy client on its stream or passed to a
 * modern client, cancellation by closing the stream), and shows both eras on /status.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitFor } from './brokerTestKit';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import { connectModernClient } from './__testUtils__/modernBrokerClient';

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
  }, 30_000);

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
  }, 30_000);

  it('calls a modern backend’s tool with progress for a legacy client (stateless backend call)', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    const progress: number[] = [];
    const result = await client.client.callTool(
      { name: 'modern_count', arguments: { steps: 3, delayMs: 10 } },
      undefined,
      { onprogress: p => progress.push(p.progress) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
    expect(progress).toEqual([1, 2, 3]);
  }, 30_000);

  it('tells a legacy client when the modern backend’s tools change (over subscriptions/listen)', async () => {
    client = await connectBrokerClient(backend.baseUrl, carol);
    // The broker answered the GET with 200: the stream is registered. (Counting streams on
    // /status raced with the previous test's client closing its own.)
    await client.eventStreamOpen;
    fleet.modern.addTool('fresh');
    await waitFor(
      () => client!.notifications.includes('notifications/tools/list_changed'),
      10_000,
      'tools/list_changed at the client',
    );
    const names = (await client.client.listTools()).tools.map(t => t.name);
    expect(names).toContain('modern_fresh');
  }, 30_000);

  describe('tool calls to the modern-only backend', () => {
    const closers: Array<() => Promise<unknown>> = [];
    afterEach(async () => {
      for (const close of closers.splice(0)) await close().catch(() => undefined);
    });

    /** An SDK 1.x client that declares elicitation and answers every request with `answer`. */
    async function legacyElicitingClient(answer: Record<string, unknown>) {
      const legacy = new Client(
        { name: 'broker-e2e-eliciting', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      const asked: unknown[] = [];
      legacy.setRequestHandler(ElicitRequestSchema, async request => {
        asked.push(request.params);
        return answer as never;
      });
      await legacy.connect(
        new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${carol}` } },
        }),
      );
      closers.push(() => legacy.close());
      return { legacy, asked };
    }

    const LONG_COUNT = { name: 'modern_count', arguments: { steps: 1000, delayMs: 20 } };

    /**
     * Starts a long call, aborts it at its first progress, and waits for the backend call's
     * stream to close (2026-07-28 has no notifications/cancelled: closing it is the cancel).
     */
    async function expectCancelledAtBackend(
      start: (
        signal: AbortSignal,
        onprogress: (p: { progress: number }) => void,
      ) => Promise<unknown>,
    ) {
      const controller = new AbortController();
      const progress: number[] = [];
      const call = start(controller.signal, p => progress.push(p.progress));
      await waitFor(() => progress.length > 0, 10_000, 'the first progress notification');
      expect(fleet.modern.openToolCalls()).toBe(1);
      controller.abort();
      await expect(call).rejects.toThrow();
      await waitFor(
        () => fleet.modern.openToolCalls() === 0,
        10_000,
        'the backend stream to close',
      );
    }

    async function modernClient(capabilities: Record<string, unknown> = {}) {
      const modern = await connectModernClient(backend.baseUrl, carol, capabilities);
      closers.push(() => modern.close());
      return modern;
    }

    it('asks a legacy client the backend’s input_required as an elicitation on its call', async () => {
      const { legacy, asked } = await legacyElicitingClient({
        action: 'accept',
        content: { confirmed: true },
      });
      const result = await legacy.callTool({
        name: 'modern_confirm',
        arguments: { message: 'Deploy?' },
      });
      expect(asked).toEqual([expect.objectContaining({ message: 'Deploy?' })]);
      expect(result.content).toEqual([{ type: 'text', text: 'confirmed: true' }]);
      expect(result).not.toHaveProperty('resultType');
    }, 30_000);

    it('cancels a legacy client’s call at the modern backend', async () => {
      const { legacy } = await legacyElicitingClient({ action: 'decline' });
      await expectCancelledAtBackend((signal, onprogress) =>
        legacy.callTool(LONG_COUNT, undefined, { signal, onprogress }),
      );
    }, 30_000);

    it('lists and calls the modern backend for a modern client, with progress', async () => {
      const modern = await modernClient();
      const names = (await modern.listTools()).tools.map(t => t.name);
      expect(names).toEqual(expect.arrayContaining(['modern_count', 'modern_confirm']));
      const progress: number[] = [];
      const result = await modern.callTool(
        { name: 'modern_count', arguments: { steps: 3, delayMs: 10 } },
        { onprogress: (p: { progress: number }) => progress.push(p.progress) },
      );
      expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
      expect(progress).toEqual([1, 2, 3]);
    }, 30_000);

    it('passes the backend’s input_required to a modern client and its retry back', async () => {
      const modern = await modernClient({ elicitation: {} });
      const asked: unknown[] = [];
      modern.setRequestHandler('elicitation/create', async request => {
        asked.push(request.params);
        return { action: 'accept', content: { confirmed: false } };
      });
      const result = await modern.callTool({
        name: 'modern_confirm',
        arguments: { message: 'Ship it?' },
      });
      expect(asked).toEqual([expect.objectContaining({ message: 'Ship it?' })]);
      expect(result.content).toEqual([{ type: 'text', text: 'confirmed: false' }]);
    }, 30_000);

    it('cancels a modern client’s call when it closes the stream', async () => {
      const modern = await modernClient();
      await expectCancelledAtBackend((signal, onprogress) =>
        modern.callTool(LONG_COUNT, { signal, onprogress }),
      );
      const after = await modern.callTool({ name: 'modern_echo', arguments: { message: 'ok' } });
      expect(after.content).toEqual([{ type: 'text', text: 'ok' }]);
    }, 30_000);
  });
});
