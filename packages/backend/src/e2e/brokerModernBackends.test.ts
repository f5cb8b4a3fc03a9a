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
import {
  BrokerClient,
  BrokerStatus,
  brokerStatus,
  connectBrokerClient,
  waitFor,
} from './brokerTestKit';
import { ExampleFleet, startExampleFleet } from './__testUtils__/exampleFleet';
import { connectModernClient, modernRequest } from './__testUtils__/modernBrokerClient';

describe('a mixed fleet (2025-11-25 and 2026-07-28 backends) in the real backend process', () => {
  let fleet: ExampleFleet;
  let backend: BackendProcess;
  let carol: string;
  let client: BrokerClient | undefined;

  function status(): Promise<BrokerStatus> {
    return brokerStatus(backend.baseUrl, carol);
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

  describe('prompts and resources of the modern-only backend that ask for input', () => {
    /** An SDK v2 client (2026-07-28) that declares elicitation and answers with `answer`. */
    async function modernElicitingClient(answer: Record<string, unknown>) {
      const modern = await connectModernClient(backend.baseUrl, carol, { elicitation: {} });
      closers.push(() => modern.close());
      const asked: unknown[] = [];
      modern.setRequestHandler('elicitation/create', async request => {
        asked.push(request.params);
        return answer as never;
      });
      return { modern, asked };
    }

    const GUARDED = 'example://modern/guarded';

    /**
     * Gets the asking prompt and reads the guarded resource with `reader`, whose elicitation
     * handler answered `who` and confirmed (`asked` its requests): both asked once, both answered.
     */
    async function expectAnsweredAfterInput(
      reader: {
        getPrompt(params: { name: string }): Promise<{ messages: unknown[] }>;
        readResource(params: { uri: string }): Promise<{ contents: unknown[] }>;
      },
      asked: unknown[],
      who: string,
    ) {
      const prompt = await reader.getPrompt({ name: 'modern_ask_greeting' });
      expect(prompt.messages).toEqual([
        { role: 'user', content: { type: 'text', text: `Hello, ${who}!` } },
      ]);
      const resource = await reader.readResource({ uri: GUARDED });
      expect(resource.contents).toEqual([
        {
          uri: GUARDED,
          mimeType: 'text/plain',
          text: 'Guarded contents, read after confirmation.',
        },
      ]);
      expect(asked).toEqual([
        expect.objectContaining({ message: 'Whom should the greeting greet?' }),
        expect.objectContaining({ message: `Read ${GUARDED}?` }),
      ]);
      return prompt;
    }

    it('asks a legacy client on the response stream of its prompts/get and resources/read', async () => {
      const { legacy, asked } = await legacyElicitingClient({
        action: 'accept',
        content: { name: 'Ada', confirmed: true },
      });
      const prompt = await expectAnsweredAfterInput(legacy, asked, 'Ada');
      expect(prompt).not.toHaveProperty('resultType');
      // Nothing asked: a plain answer, as before.
      const plain = await legacy.getPrompt({ name: 'modern_greeting', arguments: { name: 'Bo' } });
      expect(plain.messages[0].content).toEqual({ type: 'text', text: 'Hello, Bo!' });
      expect(asked).toHaveLength(2);
    }, 30_000);

    it('gives a legacy client that cannot be asked the backend’s -32021', async () => {
      client = await connectBrokerClient(backend.baseUrl, carol);
      await expect(client.client.getPrompt({ name: 'modern_ask_greeting' })).rejects.toMatchObject({
        code: -32021,
      });
    }, 30_000);

    it('passes input_required of prompts/get and resources/read to a modern client and its retry back', async () => {
      const { modern, asked } = await modernElicitingClient({
        action: 'accept',
        content: { name: 'Cy', confirmed: true },
      });
      await expectAnsweredAfterInput(modern, asked, 'Cy');
    }, 30_000);

    it('seals the backend’s requestState for a modern client and refuses it elsewhere (raw HTTP)', async () => {
      const elicitation = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      const ask = () =>
        modernRequest(
          backend.baseUrl,
          carol,
          1,
          'prompts/get',
          { name: 'modern_ask_greeting' },
          elicitation,
        );
      const first = await ask();
      expect(first.status).toBe(200);
      expect(first.response.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { name: { method: 'elicitation/create' } },
        requestState: expect.stringMatching(/^v1\./),
      });
      const answer = { name: { action: 'accept', content: { name: 'Di' } } };
      const retry = {
        name: 'modern_ask_greeting',
        inputResponses: answer,
        requestState: first.response.result.requestState,
      };
      const done = await modernRequest(
        backend.baseUrl,
        carol,
        2,
        'prompts/get',
        retry,
        elicitation,
      );
      expect(done.status).toBe(200);
      expect(done.response.result).toMatchObject({
        resultType: 'complete',
        messages: [{ role: 'user', content: { type: 'text', text: 'Hello, Di!' } }],
      });
      // Used once: the same state again is refused before anything reaches the backend.
      const again = await modernRequest(
        backend.baseUrl,
        carol,
        3,
        'prompts/get',
        retry,
        elicitation,
      );
      expect(again.status).toBe(400);
      expect(again.response.error).toMatchObject({ code: -32602, data: { reason: 'replayed' } });

      // A prompt's state does not open a resource read, nor a tampered one anything.
      const state = (await ask()).response.result.requestState as string;
      const foreign = await modernRequest(
        backend.baseUrl,
        carol,
        4,
        'resources/read',
        { uri: GUARDED, inputResponses: answer, requestState: state },
        elicitation,
      );
      expect(foreign.status).toBe(400);
      expect(foreign.response.error).toMatchObject({ data: { reason: 'foreign-request' } });
      const [version, payload, mac] = (await ask()).response.result.requestState.split('.');
      const tampered = await modernRequest(
        backend.baseUrl,
        carol,
        5,
        'prompts/get',
        { ...retry, requestState: `${version}.${payload}.${mac.slice(1)}A` },
        elicitation,
      );
      expect(tampered.status).toBe(400);
      expect(tampered.response.error).toMatchObject({ data: { reason: 'tampered' } });
    }, 30_000);

    it('opens a retry’s state for a 2025 backend’s prompt too, instead of passing it on', async () => {
      const elicitation = { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} } };
      const asked = await modernRequest(
        backend.baseUrl,
        carol,
        1,
        'prompts/get',
        { name: 'modern_ask_greeting' },
        elicitation,
      );
      const retryOf = (requestState: string) =>
        modernRequest(backend.baseUrl, carol, 2, 'prompts/get', {
          name: 'example_greeting',
          arguments: { name: 'Ed' },
          inputResponses: { name: { action: 'accept', content: { name: 'Ed' } } },
          requestState,
        });
      const foreign = await retryOf(asked.response.result.requestState);
      expect(foreign.status).toBe(400);
      expect(foreign.response.error).toMatchObject({ data: { reason: 'foreign-request' } });
      const made = await retryOf('v1.made-up.state');
      expect(made.status).toBe(400);
      expect(made.response.error).toMatchObject({ data: { reason: 'tampered' } });
    }, 30_000);

    it('answers a modern client the backend’s -32021 as HTTP 400 with the JSON-RPC error', async () => {
      const refused = await modernRequest(backend.baseUrl, carol, 9, 'prompts/get', {
        name: 'modern_ask_greeting',
      });
      expect(refused.status).toBe(400);
      expect(refused.messages).toEqual([
        {
          jsonrpc: '2.0',
          id: 9,
          error: expect.objectContaining({
            code: -32021,
            data: { requiredCapabilities: { elicitation: expect.anything() } },
          }),
        },
      ]);
    }, 30_000);
  });
});
