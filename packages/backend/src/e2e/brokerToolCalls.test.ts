/*
 * Tool calls through the broker end to end (spec §4): the real backend process with real
 * sign-in, the official SDK client, and real MCP servers — the example server, server-everything
 * (a child process, killed in the last test) and the raw test backend, which records exactly
 * what reaches it (ids with their JSON type, cancellations, credentials).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import {
  EverythingServer,
  RawMcpBackend,
  startEverythingServer,
  startRawMcpBackend,
} from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { mcpRawPost } from '../testing/mcpRawPost';
import { waitFor } from './brokerTestKit';

const ELICITATION_TTL_MS = 3_000;
const TOOL_CALL_TIMEOUT_MS = 6_000;

describe('tool calls through the MCP broker (real backend process)', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let everything: EverythingServer;
  let raw: RawMcpBackend;
  let carol: string;
  const clients: Client[] = [];

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;

  beforeAll(async () => {
    [example, everything, raw] = await Promise.all([
      startExampleMcpServer({ port: 0, bearerToken: 'example-secret' }),
      startEverythingServer(),
      startRawMcpBackend(),
    ]);
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [
            {
              name: 'example',
              url: example.url,
              headers: { Authorization: 'Bearer example-secret' },
            },
            { name: 'everything', url: everything.url },
            { name: 'raw', url: raw.url, headers: { Authorization: 'Bearer raw-secret' } },
          ],
          elicitationTtl: { milliseconds: ELICITATION_TTL_MS },
          toolCallTimeout: { milliseconds: TOOL_CALL_TIMEOUT_MS },
        },
      },
    });
    // Carol (portal-admin) may use every tool: these tests are about tool calls, not access
    // (brokerPermissions.test.ts).
    carol = await backend.signIn('carol');
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close().catch(() => undefined)));
    await backend?.stop();
    await Promise.all([example?.close(), everything?.kill(), raw?.close()]);
  }, 30_000);

  /** A POST the SDK client sent, with the broker's answer status. */
  interface SentPost {
    body: string;
    status: number;
  }

  async function connect(
    token = carol,
    capabilities: Record<string, object> = { elicitation: {} },
  ): Promise<{
    client: Client;
    transport: StreamableHTTPClientTransport;
    posts: SentPost[];
  }> {
    const posts: SentPost[] = [];
    const transport = new StreamableHTTPClientTransport(new URL(mcpUrl()), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
      fetch: async (url, init) => {
        const response = await fetch(url, init);
        if (init?.method === 'POST')
          posts.push({ body: String(init.body), status: response.status });
        return response;
      },
    });
    const client = new Client({ name: 'tool-calls-e2e', version: '1.0.0' }, { capabilities });
    await client.connect(transport);
    clients.push(client);
    // Every backend must be listed before its tools can be called.
    await waitFor(
      async () => {
        const names = (await client.listTools()).tools.map(t => t.name);
        return ['example_confirm', 'everything_trigger-long-running-operation', 'raw_elicit'].every(
          n => names.includes(n),
        );
      },
      20_000,
      'every backend’s tools',
    );
    return { client, transport, posts };
  }

  /** POSTs a raw JSON-RPC message on a client session, as a client would without the SDK. */
  function rawPost(
    sessionId: string,
    body: unknown,
    init: { signal?: AbortSignal } = {},
  ): Promise<Response> {
    return mcpRawPost(mcpUrl(), carol, body, {
      sessionId,
      protocolVersion: '2025-11-25',
      signal: init.signal,
    });
  }

  const backendResponses = () => raw.requests.filter(r => r.method === undefined);

  it('streams the example server’s progress to the client in order, with the client’s own token', async () => {
    const { client } = await connect();
    const seen: Array<{ progress: number; total?: number }> = [];
    const result = await client.callTool(
      { name: 'example_count', arguments: { steps: 4, delayMs: 20 } },
      undefined,
      {
        onprogress: p => seen.push({ progress: p.progress, total: p.total }),
      },
    );
    // The SDK only calls onprogress for notifications that carry the token it chose.
    expect(seen).toEqual([1, 2, 3, 4].map(progress => ({ progress, total: 4 })));
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 4' }]);
  }, 30_000);

  it('answers a call with nothing to stream as application/json when the client accepts it, as an event stream when it accepts only that', async () => {
    const { transport } = await connect();
    const call = (id: string) => ({
      jsonrpc: '2.0',
      id,
      method: 'tools/call',
      params: { name: 'example_echo', arguments: { message: id } },
    });
    const json = await rawPost(transport.sessionId!, call('as-json'));
    expect(json.status).toBe(200);
    expect(json.headers.get('content-type')).toBe('application/json');
    expect(json.headers.get('mcp-session-id')).toBe(transport.sessionId);
    expect(await json.json()).toMatchObject({
      jsonrpc: '2.0',
      id: 'as-json',
      result: { content: [{ type: 'text', text: expect.stringContaining('as-json') }] },
    });
    const sse = await fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        authorization: `Bearer ${carol}`,
        'content-type': 'application/json',
        accept: 'text/event-stream',
        'mcp-session-id': transport.sessionId!,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify(call('as-sse')),
    });
    expect(sse.headers.get('content-type')).toBe('text/event-stream');
    expect(await sse.text()).toMatch(/^event: message\ndata: \{"jsonrpc":"2\.0","id":"as-sse"/);
  });

  it('streams server-everything’s trigger-long-running-operation progress', async () => {
    const { client } = await connect();
    const seen: number[] = [];
    await client.callTool(
      { name: 'everything_trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } },
      undefined,
      { onprogress: p => seen.push(p.progress) },
    );
    expect(seen).toEqual([1, 2, 3]);
  }, 30_000);

  it('round-trips the example server’s confirm elicitation with a gateway id', async () => {
    const { client } = await connect();
    const ids: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
      ids.push(extra.requestId);
      expect(request.params.message).toBe('Deploy to production?');
      return { action: 'accept', content: { confirmed: true, comment: 'go' } };
    });
    const result = await client.callTool({
      name: 'example_confirm',
      arguments: { question: 'Deploy to production?' },
    });
    expect(result.structuredContent).toEqual({
      action: 'accept',
      content: { confirmed: true, comment: 'go' },
    });
    expect(ids).toHaveLength(1);
    expect(ids[0]).toMatch(/^example:[A-Za-z0-9_-]{22,}$/);
  }, 30_000);

  it('round-trips server-everything’s trigger-elicitation-request', async () => {
    const { client } = await connect();
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'decline' }));
    const result = await client.callTool({
      name: 'everything_trigger-elicitation-request',
      arguments: {},
    });
    expect(JSON.stringify(result.content)).toMatch(/decline/i);
  }, 30_000);

  it.each([
    ['string', '"abc-1"'],
    ['integer', '4711'],
    ['float', '7.5'],
  ])(
    'gives the backend its %s elicitation id back with the same JSON type and value',
    async (type, id) => {
      const { client } = await connect();
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: 'accept',
        content: { ok: true },
      }));
      const result = await client.callTool({ name: 'raw_elicit', arguments: { id } });
      expect(result.structuredContent).toMatchObject({
        sentId: id,
        receivedId: id,
        receivedType: type,
      });
    },
    30_000,
  );

  it('relays a backend’s roots/list during a call to a client that declared roots', async () => {
    const { client } = await connect(carol, { roots: { listChanged: true } });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///work/project', name: 'project' }],
    }));
    const result = await client.callTool({
      name: 'raw_elicit',
      arguments: { id: '"roots-1"', method: 'roots/list' },
    });
    expect(result.structuredContent).toMatchObject({
      receivedId: '"roots-1"',
      receivedType: 'string',
      answer: { roots: [{ uri: 'file:///work/project', name: 'project' }] },
    });
    // The backend session declared roots (without listChanged, which the broker does not relay).
    const answer = raw.answers.find(a => a.sentId === '"roots-1"')!;
    expect(raw.capabilitiesOf(answer.sessionId)).toEqual({ roots: {} });
  }, 30_000);

  it('relays a backend’s sampling/createMessage during a call to a client that declared sampling', async () => {
    const { client } = await connect(carol, { sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, async request => ({
      role: 'assistant',
      model: 'test-model',
      content: { type: 'text', text: `seen ${request.params.messages.length} message(s)` },
    }));
    const result = await client.callTool({
      name: 'raw_elicit',
      arguments: { id: '88', method: 'sampling/createMessage' },
    });
    expect(result.structuredContent).toMatchObject({
      receivedId: '88',
      receivedType: 'integer',
      answer: { model: 'test-model', content: { type: 'text', text: 'seen 1 message(s)' } },
    });
  }, 30_000);

  it('uses the broker’s credentials towards the backend session, never the client’s token', async () => {
    const call = raw.requests.filter(r => r.method === 'tools/call');
    expect(call.length).toBeGreaterThan(0);
    for (const request of raw.requests) {
      expect(request.headers.authorization).toBe('Bearer raw-secret');
      expect(request.text).not.toContain(carol);
    }
  });

  it('accepts an answer once, refuses replays and foreign sessions with 404, and nothing extra reaches the backend', async () => {
    const { client, transport } = await connect();
    const { transport: otherTransport } = await connect();
    let gatewayId: string | undefined;
    let foreign: Response | undefined;
    client.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      gatewayId = String(extra.requestId);
      foreign = await rawPost(otherTransport.sessionId!, {
        jsonrpc: '2.0',
        id: gatewayId,
        result: { action: 'accept', content: { ok: false } },
      });
      return { action: 'accept', content: { ok: true } };
    });
    const before = backendResponses().length;
    const result = await client.callTool({ name: 'raw_elicit', arguments: { id: '99' } });
    expect(result.structuredContent).toMatchObject({
      answer: { action: 'accept', content: { ok: true } },
    });
    expect(foreign!.status).toBe(404);
    expect(await foreign!.json()).toMatchObject({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32600, message: expect.any(String) },
    });

    const replay = await rawPost(transport.sessionId!, {
      jsonrpc: '2.0',
      id: gatewayId,
      result: { action: 'decline' },
    });
    expect(replay.status).toBe(404);
    const unknown = await rawPost(transport.sessionId!, {
      jsonrpc: '2.0',
      id: 'raw:AAAAAAAAAAAAAAAAAAAAAA',
      result: { action: 'decline' },
    });
    expect(unknown.status).toBe(404);
    expect(backendResponses().length - before).toBe(1);
  }, 30_000);

  it('gives two concurrent eliciting calls on one session their own elicitations', async () => {
    const { client } = await connect();
    const messages: string[] = [];
    let secondCallDone!: () => void;
    const secondCallEnded = new Promise<void>(resolve => (secondCallDone = resolve));
    client.setRequestHandler(ElicitRequestSchema, async request => {
      messages.push(request.params.message);
      // Answer the second request first (its call ends with that answer), to show answers are
      // matched by id, not by order.
      if (request.params.message === 'Answer request 1') await secondCallEnded;
      return { action: 'accept', content: { ok: request.params.message === 'Answer request 1' } };
    });
    const [one, two] = await Promise.all([
      client.callTool({ name: 'raw_elicit', arguments: { id: '1' } }),
      client
        .callTool({ name: 'raw_elicit', arguments: { id: '2' } })
        .finally(() => secondCallDone()),
    ]);
    expect(messages.sort()).toEqual(['Answer request 1', 'Answer request 2']);
    expect(one.structuredContent).toMatchObject({ sentId: '1', answer: { content: { ok: true } } });
    expect(two.structuredContent).toMatchObject({
      sentId: '2',
      answer: { content: { ok: false } },
    });
  }, 30_000);

  it('forwards the client’s cancellation to the backend with the backend’s request id', async () => {
    const { client } = await connect();
    const controller = new AbortController();
    const calls = raw.requests.filter(r => r.method === 'tools/call').length;
    const call = client.callTool({ name: 'raw_wait_for_cancel', arguments: {} }, undefined, {
      signal: controller.signal,
      onprogress: () => controller.abort('user pressed stop'),
    });
    await expect(call).rejects.toThrow();
    await waitFor(() => raw.cancellations.length > 0, 5_000, 'the cancellation at the backend');
    const backendCall = raw.requests.filter(r => r.method === 'tools/call')[calls];
    expect(raw.cancellations.at(-1)).toMatchObject({
      requestId: backendCall.id,
      sessionId: backendCall.sessionId,
    });
  }, 30_000);

  it('cancels the backend call and forgets the elicitation id when the client disconnects', async () => {
    const { transport } = await connect();
    const sessionId = transport.sessionId!;
    const cancellationsBefore = raw.cancellations.length;
    const controller = new AbortController();
    const response = await rawPost(
      sessionId,
      {
        jsonrpc: '2.0',
        id: 'disconnect-1',
        method: 'tools/call',
        params: { name: 'raw_elicit', arguments: { id: '31' } },
      },
      { signal: controller.signal },
    );
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const reader = response.body!.getReader();
    let text = '';
    while (!text.includes('elicitation/create'))
      text += new TextDecoder().decode((await reader.read()).value);
    const gatewayId = /"id":"(raw:[A-Za-z0-9_-]+)"/.exec(text)![1];
    controller.abort();
    await waitFor(
      () => raw.cancellations.length > cancellationsBefore,
      5_000,
      'the cancellation at the backend',
    );
    expect(raw.cancellations.length).toBe(cancellationsBefore + 1);
    const before = backendResponses().length;
    const late = await rawPost(sessionId, {
      jsonrpc: '2.0',
      id: gatewayId,
      result: { action: 'accept', content: {} },
    });
    expect(late.status).toBe(404);
    expect(backendResponses().length).toBe(before);
  }, 30_000);

  it('refuses an answer after the elicitation TTL and tells the backend the request expired', async () => {
    const { client, posts } = await connect();
    const before = backendResponses().length;
    let toolReturned: () => void = () => {};
    const returned = new Promise<void>(resolve => (toolReturned = resolve));
    client.setRequestHandler(ElicitRequestSchema, async () => {
      await returned; // answer only after the tool went on without the answer: surely late
      return { action: 'accept', content: { ok: true } };
    });
    const started = Date.now();
    const result = await client.callTool({ name: 'raw_elicit', arguments: { id: '5' } });
    toolReturned();
    // The tool resumed at the TTL (not before) with the broker's expiry error as its answer.
    expect(Date.now() - started).toBeGreaterThanOrEqual(ELICITATION_TTL_MS - 200);
    expect(result.structuredContent).toMatchObject({
      receivedId: '5',
      answer: { code: -32001, message: expect.stringContaining('mcpBroker.elicitationTtl') },
    });
    // The late answer was refused (404 at the broker): only the expiry notice reached the backend.
    const lateAnswer = await waitFor(
      () => posts.find(p => p.body.includes('"accept"')),
      5_000,
      'the late answer to be posted',
    );
    expect(lateAnswer?.status).toBe(404);
    const responses = backendResponses().slice(before);
    expect(responses).toHaveLength(1);
    expect(responses[0].text).not.toContain('accept');
  }, 30_000);

  it('ends a call that outlives toolCallTimeout with error -32001 and cancels it at the backend', async () => {
    const { client } = await connect();
    const cancellations = raw.cancellations.length;
    const started = Date.now();
    const error: McpError = await client
      .callTool({ name: 'raw_wait_for_cancel', arguments: {} }, undefined, { timeout: 30_000 })
      .then(
        () => {
          throw new Error('expected the call to fail');
        },
        e => e,
      );
    expect(error.code).toBe(-32001);
    expect(error.message).toMatch(/mcpBroker\.toolCallTimeout/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(TOOL_CALL_TIMEOUT_MS - 500);
    await waitFor(
      () => raw.cancellations.length > cancellations,
      5_000,
      'the cancellation at the backend',
    );
    expect(raw.cancellations.length).toBe(cancellations + 1);
  }, 30_000);

  it('ends the client’s call with an error within seconds when the backend is killed mid-call', async () => {
    const { client } = await connect();
    let killedAt = 0;
    const call = client.callTool(
      { name: 'everything_trigger-long-running-operation', arguments: { duration: 30, steps: 30 } },
      undefined,
      {
        timeout: 60_000,
        onprogress: () => {
          if (killedAt === 0) {
            killedAt = Date.now();
            void everything.kill();
          }
        },
      },
    );
    const error: McpError = await call.then(
      () => {
        throw new Error('expected the call to fail');
      },
      e => e,
    );
    // Ended by the lost backend (-32000 naming it), not by the tool-call timeout (-32001).
    expect(killedAt).toBeGreaterThan(0);
    expect(error.code).toBe(-32000);
    expect(error.message).toMatch(/MCP server "everything"/);
  }, 30_000);
});
