/*
 * Tool calls to a 2026-07-28 backend (stateless, no backend session) against the repository's
 * modern example server run modern-only (`legacy: 'reject'`, SDK v2), plus one scripted double
 * for what that server cannot be made to do (answer with a task).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mockServices } from '@backstage/backend-test-utils';
import { ModernExampleMcpServer, startModernExampleMcpServer } from '@internal/example-mcp-server';
import { ElicitationIdMap } from './ElicitationIdMap';
import { ToolCalls, type ToolCallsOptions } from './ToolCalls';
import { urlElicitationPolicy } from './urlElicitations';
import type { BackendEndpoint } from '../backend/backendTransport';
import { channelsOf } from '../backend/testing/testBackends';
import { collectingSink } from './testing/collectingSink';
import { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import { MemoryRequestStateNonceStore } from '../inputRequests/requestStateNonces';
import { scanParamHeaders } from '../protocol/paramHeaders';
import { BrokerTelemetry } from '../telemetry/BrokerTelemetry';
import { MetricName } from '../telemetry/BrokerMetrics';
import { InMemoryTelemetry } from '../telemetry/__testUtils__/inMemoryTelemetry';
import { MemoryTaskStore } from '../tasks/MemoryTaskStore';
import { ModernTaskRelay } from '../tasks/ModernTaskRelay';

const KEY = Buffer.alloc(32, 7);
const binding = { principal: 'user:default/ada', method: 'tools/call', name: 'modern/confirm' };

const regionalEchoScan = scanParamHeaders({
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' } },
});
const REGIONAL_ECHO_HEADERS = regionalEchoScan.valid ? regionalEchoScan.declarations : [];

function build(endpoint: BackendEndpoint, extra: Partial<ToolCallsOptions> = {}) {
  const logger = mockServices.logger.mock();
  const sealer = new RequestStateSealer({
    keys: fixedHmacKeys(KEY),
    ttlMs: 60_000,
    nonces: new MemoryRequestStateNonceStore(),
  });
  const forwarder = new ToolCalls({
    logger,
    elicitations: new ElicitationIdMap({ ttlMs: 60_000 }),
    backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
    closeSessionsOf: async () => undefined,
    toolCallTimeoutMs: 20_000,
    requestTimeoutMs: 5_000,
    requestStates: sealer,
    // What the catalog read from the example server's tools/list.
    paramHeadersOf: (backend, tool) =>
      backend === endpoint.name && tool === 'regional_echo' ? REGIONAL_ECHO_HEADERS : [],
    ...extra,
  });
  return { forwarder, sealer };
}

/**
 * A collecting sink whose client accepts every `elicitation/create` at once (as session `c`);
 * `answered` holds the answers' promises.
 */
function acceptingSink(forwarder: ToolCalls) {
  const sink = collectingSink();
  const answered: Promise<unknown>[] = [];
  const send = sink.send.bind(sink);
  sink.send = message => {
    if (message.method === 'elicitation/create') {
      answered.push(
        forwarder.answer('c', { id: message.id, result: { action: 'accept', content: {} } }),
      );
    }
    return send(message);
  };
  return { sink, answered };
}

describe('ToolCalls with a modern-only (2026-07-28) backend', () => {
  let server: ModernExampleMcpServer;
  let endpoint: BackendEndpoint;
  let forwarder: ToolCalls;
  let sealer: RequestStateSealer;

  const call = (
    params: Record<string, unknown>,
    client = forwarder.sessionClient('client-a', { elicitation: {} }),
  ) => ({
    client,
    backend: channelsOf(endpoint),
    clientRequestId: 1,
    params,
    backendEra: 'modern' as const,
  });

  beforeEach(async () => {
    server = await startModernExampleMcpServer({
      port: 0,
      legacy: 'reject',
      bearerToken: 'broker-secret',
    });
    endpoint = {
      name: 'modern',
      url: server.url,
      headers: { Authorization: 'Bearer broker-secret' },
    };
    ({ forwarder, sealer } = build(endpoint));
  });
  afterEach(async () => {
    await forwarder.close();
    await server.close();
  });

  it('streams progress with the client’s token, then a result without resultType', async () => {
    const sink = collectingSink();
    await forwarder.forward(
      call({ name: 'count', arguments: { steps: 3, delayMs: 1 }, _meta: { progressToken: 'p' } }),
      sink,
    );
    const progress = sink.messages.filter(m => m.method === 'notifications/progress');
    expect(progress.map(m => [m.params.progressToken, m.params.progress])).toEqual([
      ['p', 1],
      ['p', 2],
      ['p', 3],
    ]);
    const final = sink.messages[sink.messages.length - 1];
    expect(final).toMatchObject({
      id: 1,
      result: { content: [{ type: 'text', text: 'counted to 3' }] },
    });
    expect(final.result.resultType).toBeUndefined();
    expect(forwarder.inFlightCount()).toBe(0);
  });

  it('mirrors x-mcp-header arguments into Mcp-Param-* headers (Base64 if not ASCII)', async () => {
    const sink = collectingSink();
    await forwarder.forward(
      call({ name: 'regional_echo', arguments: { region: 'Zürich', message: 'hi' } }),
      sink,
    );
    expect(sink.messages[sink.messages.length - 1].result.content).toEqual([
      { type: 'text', text: 'hi from Zürich (Mcp-Param-Region: =?base64?WsO8cmljaA==?=)' },
    ]);
  });

  it('asks a 2025 client the backend’s input as a real request and retries with the answer', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(call({ name: 'confirm', arguments: { message: 'Go?' } }), sink);
    const asked = await sink.waitFor(m => m.method === 'elicitation/create');
    expect(asked.id).toMatch(/^modern:/);
    expect(asked.params).toMatchObject({ message: 'Go?' });
    await expect(
      forwarder.answer('client-a', {
        id: asked.id,
        result: { action: 'accept', content: { confirmed: true } },
      }),
    ).resolves.toEqual({ outcome: 'delivered' });
    await done;
    expect(sink.messages[sink.messages.length - 1]).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: expect.objectContaining({ content: [{ type: 'text', text: 'confirmed: true' }] }),
    });
  });

  it('passes input_required to a 2026-07-28 client with the backend’s state sealed inside', async () => {
    const sink = collectingSink();
    await forwarder.forward(
      call(
        { name: 'confirm', arguments: { message: 'Go?' } },
        forwarder.statelessClient({
          owner: 'client-a',
          capabilities: { elicitation: {} },
          caller: { declaredCapabilities: { elicitation: {} }, binding },
        }),
      ),
      sink,
    );
    const final = sink.messages[sink.messages.length - 1];
    expect(final.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { confirm: { method: 'elicitation/create' } },
    });
    const opened = await sealer.open(final.result.requestState, binding);
    expect(opened.backend).toBe('modern');
    expect(opened.callId).toBeUndefined();
  });

  it('cancels by closing the backend stream when the client goes away', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(
      call({ name: 'count', arguments: { steps: 1000, delayMs: 20 }, _meta: { progressToken: 1 } }),
      sink,
    );
    await sink.waitFor(m => m.method === 'notifications/progress');
    sink.disconnect();
    await done;
    expect(forwarder.inFlightCount()).toBe(0);
    expect(sink.messages.some(m => m.id === 1)).toBe(false);
  });
});

/** A scripted 2026-07-28 backend double: answers every POST with `answer(body)`. */
async function startDouble(
  answer: (body: any) => { status: number; body: Record<string, unknown> },
) {
  const headers: http.IncomingHttpHeaders[] = [];
  const bodies: any[] = [];
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', chunk => (text += chunk));
    req.on('end', () => {
      headers.push(req.headers);
      const body = JSON.parse(text);
      bodies.push(body);
      const reply = answer(body);
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    headers,
    bodies,
    endpoint: {
      name: 'double',
      url: `http://127.0.0.1:${port}/mcp`,
      headers: { Authorization: 'Bearer b' },
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>(resolve => server.close(() => resolve()));
    },
  };
}

/**
 * A scripted double that answers a request without `inputResponses` with `input_required`
 * (`inputs(body)`: its inputRequests and requestState) and the retry with `final(body)`.
 */
function inputRequiredDouble(
  inputs: (body: any) => Record<string, unknown>,
  final: (body: any) => Record<string, unknown>,
) {
  return startDouble(body => ({
    status: 200,
    body: {
      jsonrpc: '2.0',
      id: body.id,
      result:
        body.params.inputResponses === undefined
          ? { resultType: 'input_required', ...inputs(body) }
          : final(body),
    },
  }));
}

describe('ToolCalls with a scripted 2026-07-28 backend double', () => {
  const legacyCall = (endpoint: BackendEndpoint, forwarder: ToolCalls) => ({
    client: forwarder.sessionClient('c', { elicitation: {} }),
    backend: channelsOf(endpoint),
    clientRequestId: 'r1',
    params: { name: 'slow', arguments: {} },
    backendEra: 'modern' as const,
  });

  it('answers a task result with an error naming the backend (scripted double)', async () => {
    const double = await startDouble(body => ({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: body.id,
        result: { resultType: 'task', task: { taskId: 't1', status: 'working' } },
      },
    }));
    const { forwarder } = build(double.endpoint);
    const sink = collectingSink();
    await forwarder.forward(legacyCall(double.endpoint, forwarder), sink);
    expect(sink.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'r1',
        error: expect.objectContaining({
          message:
            'MCP server "double" returned a task to a call that did not declare the tasks extension; call the tool with the extension declared (2026-07-28) or params.task (2025-11-25)',
          data: expect.objectContaining({ backend: 'double', reason: 'task-result' }),
        }),
      },
    ]);
    // The stateless request: the broker's credentials, the mirroring headers, no session.
    expect(double.headers[0]).toMatchObject({
      authorization: 'Bearer b',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'slow',
    });
    expect(double.headers[0]['mcp-session-id']).toBeUndefined();
    expect(double.bodies[0].params._meta).toEqual({
      'io.modelcontextprotocol/protocolVersion': '2026-07-28',
      'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
      'io.modelcontextprotocol/clientInfo': expect.objectContaining({ name: expect.any(String) }),
    });
    await forwarder.close();
    await double.close();
  });

  it('keeps a task answer it cannot read from the client, and its slot from the table (task creation, scripted double)', async () => {
    const double = await startDouble(body => ({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: body.id,
        result: { resultType: 'task', taskId: 'backend-task-1', status: 'sleeping' },
      },
    }));
    const { forwarder } = build(double.endpoint);
    const store = new MemoryTaskStore();
    const relay = new ModernTaskRelay({
      store,
      config: {
        enabled: true,
        perPerson: 4,
        maxTtlMs: 60_000,
        minPollIntervalMs: 1000,
        maxStoredResultBytes: 1024,
      },
      toolCallTimeoutMs: 20_000,
      backendOf: () => ({
        server: { ...double.endpoint, toolPrefix: '', headers: {} },
        channel: channelsOf(double.endpoint).modern,
        supportsTasks: true,
      }),
    });
    const sink = collectingSink();
    await forwarder.forward(
      {
        ...legacyCall(double.endpoint, forwarder),
        taskCreation: relay.creation(
          { principal: 'user:default/ada', mayUse: () => true },
          { server: 'double', tool: 'slow' },
        ),
      },
      sink,
    );
    expect(sink.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 'r1',
        error: expect.objectContaining({
          message: 'MCP server "double" sent a task result without a valid task',
        }),
      },
    ]);
    expect(JSON.stringify(sink.messages)).not.toContain('backend-task-1');
    // The backend was told the client takes tasks; the slot reserved for it is gone.
    expect(
      double.bodies[0].params._meta['io.modelcontextprotocol/clientCapabilities'].extensions,
    ).toEqual({ 'io.modelcontextprotocol/tasks': {} });
    expect(await store.countOpen('user:default/ada', Date.now())).toBe(0);
    await forwarder.close();
    await double.close();
  });

  it("traces each request to the backend as a CLIENT span under the client's request, its traceparent going with it, input rounds included (scripted double, the OpenTelemetry SDK in memory)", async () => {
    const double = await inputRequiredDouble(
      () => ({
        inputRequests: { ok: { method: 'elicitation/create', params: { message: 'ok?' } } },
        requestState: 'state-1',
      }),
      () => ({ content: [{ type: 'text', text: 'done' }] }),
    );
    const sdk = new InMemoryTelemetry();
    const request = BrokerTelemetry.create(sdk).clientRequest({
      method: 'tools/call',
      era: 'legacy',
      headers: {},
    });
    const { forwarder } = build(double.endpoint);
    const { sink, answered } = acceptingSink(forwarder);
    await forwarder.forward(
      { ...legacyCall(double.endpoint, forwarder), telemetry: request },
      sink,
    );
    await Promise.all(answered);
    request.end({ outcome: 'succeeded' });

    const spans = sdk.spans();
    const server = spans.find(span => span.name === 'tools/call')!;
    const backend = spans.filter(span => span.name === 'tools/call slow');
    expect(backend).toHaveLength(2);
    expect(double.headers.map(headers => headers.traceparent)).toEqual(
      backend.map(span => `00-${request.traceId}-${span.spanContext().spanId}-01`),
    );
    for (const span of backend) {
      expect(span.parentSpanContext?.spanId).toBe(server.spanContext().spanId);
      expect(span.attributes).toMatchObject({
        'mcp_broker.server': 'double',
        'gen_ai.tool.name': 'slow',
        'mcp_broker.era': 'modern',
        'mcp.protocol.version': '2026-07-28',
        'mcp_broker.outcome': 'succeeded',
      });
    }
    const histogram = await sdk.histogram(MetricName.clientOperationDuration);
    expect(histogram.map(point => point.value.count)).toEqual([2]);
    await forwarder.close();
    await double.close();
  });

  it('passes a backend’s 4xx JSON-RPC error through unchanged (scripted double)', async () => {
    const error = { code: -32021, message: 'needs sampling', data: { required: ['sampling'] } };
    const double = await startDouble(body => ({
      status: 400,
      body: { jsonrpc: '2.0', id: body.id, error },
    }));
    const { forwarder } = build(double.endpoint);
    const sink = collectingSink();
    await forwarder.forward(legacyCall(double.endpoint, forwarder), sink);
    expect(sink.messages).toEqual([{ jsonrpc: '2.0', id: 'r1', error }]);
    await forwarder.close();
    await double.close();
  });

  it('ends a legacy client’s call after 8 input rounds, each answered (scripted double)', async () => {
    const double = await startDouble(body => ({
      status: 200,
      body: {
        jsonrpc: '2.0',
        id: body.id,
        result: {
          resultType: 'input_required',
          inputRequests: {
            again: { method: 'elicitation/create', params: { message: 'more?' } },
          },
          requestState: `state-${body.params.inputResponses === undefined ? 0 : 1}`,
        },
      },
    }));
    const { forwarder } = build(double.endpoint);
    const { sink, answered } = acceptingSink(forwarder);
    await forwarder.forward(legacyCall(double.endpoint, forwarder), sink);
    await Promise.all(answered);
    expect(double.bodies).toHaveLength(9);
    expect(double.bodies[1].params).toMatchObject({
      inputResponses: { again: { action: 'accept', content: {} } },
      requestState: 'state-0',
    });
    expect(sink.messages[sink.messages.length - 1]).toEqual({
      jsonrpc: '2.0',
      id: 'r1',
      error: expect.objectContaining({
        data: expect.objectContaining({ reason: 'too-many-input-rounds' }),
      }),
    });
    await forwarder.close();
    await double.close();
  });

  it('relays a URL elicitation among input requests only for https, named with its server, and ends the call on any other (scripted double)', async () => {
    const double = await inputRequiredDouble(
      body => ({
        inputRequests: {
          link: {
            method: 'elicitation/create',
            params: { mode: 'url', url: body.params.arguments.url, message: 'Sign in' },
          },
        },
      }),
      () => ({ content: [{ type: 'text', text: 'signed in' }] }),
    );
    const { forwarder } = build(double.endpoint, {
      urlElicitations: urlElicitationPolicy('https://portal.example.com/api/mcp-broker'),
    });
    const run = async (url: string) => {
      const { sink, answered } = acceptingSink(forwarder);
      await forwarder.forward(
        { ...legacyCall(double.endpoint, forwarder), params: { name: 'slow', arguments: { url } } },
        sink,
      );
      await Promise.all(answered);
      return sink.messages;
    };
    const relayed = await run('https://login.example/device');
    expect(relayed[0]).toMatchObject({
      method: 'elicitation/create',
      params: {
        mode: 'url',
        url: 'https://login.example/device',
        message: 'MCP server "double" asks you to open a link: Sign in',
      },
    });
    expect(relayed.at(-1)).toMatchObject({ result: { content: [{ text: 'signed in' }] } });
    for (const url of [
      'http://login.example/device',
      'https://portal.example.com/api/mcp-broker/connect/double',
    ]) {
      const refused = await run(url);
      expect(refused).toEqual([
        {
          jsonrpc: '2.0',
          id: 'r1',
          error: expect.objectContaining({
            message: expect.stringMatching(
              /^MCP server "double" asked for input the broker does not relay\. The MCP broker does not relay this URL elicitation to the person: /,
            ),
          }),
        },
      ]);
    }
    await forwarder.close();
    await double.close();
  });

  describe('prompts/get of a 2026-07-28 backend that asks for input (scripted double)', () => {
    /** The backend's own state: opaque to the broker, so any bytes, here JSON-hostile ones. */
    const BACKEND_STATE = 'opaque/+=.\u2603"state"';
    const promptCall = (endpoint: BackendEndpoint, forwarder: ToolCalls) => ({
      ...legacyCall(endpoint, forwarder),
      method: 'prompts/get',
      params: { name: 'ask', arguments: { topic: 'x' } },
    });
    async function askingDouble() {
      return inputRequiredDouble(
        () => ({
          inputRequests: {
            who: { method: 'elicitation/create', params: { message: 'who?' } },
          },
          requestState: BACKEND_STATE,
        }),
        body => ({
          messages: [],
          description: `for ${body.params.inputResponses.who.content.n}`,
        }),
      );
    }

    it('asks a legacy client and retries prompts/get with the answer and the state byte for byte', async () => {
      const double = await askingDouble();
      const { forwarder } = build(double.endpoint);
      const sink = collectingSink();
      const done = forwarder.forward(promptCall(double.endpoint, forwarder), sink);
      const asked = await sink.waitFor(m => m.method === 'elicitation/create');
      await forwarder.answer('c', {
        id: asked.id,
        result: { action: 'accept', content: { n: 1 } },
      });
      await done;
      expect(double.headers.map(h => [h['mcp-method'], h['mcp-name']])).toEqual([
        ['prompts/get', 'ask'],
        ['prompts/get', 'ask'],
      ]);
      expect(double.bodies[1].params).toMatchObject({
        name: 'ask',
        arguments: { topic: 'x' },
        inputResponses: { who: { action: 'accept', content: { n: 1 } } },
        requestState: BACKEND_STATE,
      });
      expect(sink.messages[sink.messages.length - 1]).toEqual({
        jsonrpc: '2.0',
        id: 'r1',
        result: { messages: [], description: 'for 1' },
      });
      await forwarder.close();
      await double.close();
    });

    it('seals the backend’s state for a 2026-07-28 client, bound to the prompt', async () => {
      const double = await askingDouble();
      const { forwarder, sealer } = build(double.endpoint);
      const sink = collectingSink();
      const promptBinding = {
        principal: 'user:default/ada',
        method: 'prompts/get',
        name: 'double/ask',
        arguments: { topic: 'x' },
      };
      await forwarder.forward(
        {
          ...promptCall(double.endpoint, forwarder),
          client: forwarder.statelessClient({
            owner: 'c',
            capabilities: { elicitation: {} },
            caller: { declaredCapabilities: { elicitation: {} }, binding: promptBinding },
          }),
        },
        sink,
      );
      const final = sink.messages[sink.messages.length - 1];
      expect(final.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { who: { method: 'elicitation/create' } },
      });
      expect(final.result.requestState).not.toContain('opaque');
      await expect(
        sealer.open(final.result.requestState, { ...promptBinding, method: 'resources/read' }),
      ).rejects.toMatchObject({ reason: 'foreign-request' });
      const opened = await sealer.open(final.result.requestState, promptBinding);
      expect(opened).toMatchObject({ backend: 'double', backendRequestState: BACKEND_STATE });
      await forwarder.close();
      await double.close();
    });
  });
});
