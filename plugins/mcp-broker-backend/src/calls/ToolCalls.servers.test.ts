/*
 * The call machinery against real MCP servers built with the SDK: the repository's example
 * server and @modelcontextprotocol/server-everything (a child process, so it can be killed).
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { EverythingServer, startEverythingServer } from '@internal/test-mcp-backends';
import { ElicitationIdMap } from './ElicitationIdMap';
import { ToolCalls } from './ToolCalls';
import type { BackendEndpoint } from '../backend/backendTransport';
import { collectingSink } from './testing/collectingSink';
import { testBackends } from '../backend/testing/testBackends';

function buildForwarder(endpoints: BackendEndpoint[]) {
  const logger = mockServices.logger.mock();
  const backends = testBackends();
  for (const endpoint of endpoints) backends.add(endpoint);
  const elicitations = new ElicitationIdMap({ ttlMs: 60_000 });
  const forwarder = new ToolCalls({
    logger,
    elicitations,
    backendOf: name => backends.get(name),
    closeSessionsOf: owner => backends.closeSessionsOf(owner),
    toolCallTimeoutMs: 20_000,
    requestTimeoutMs: 5_000,
  });
  const close = async () => {
    await forwarder.close();
    await backends.close();
  };
  return { forwarder, backend: backends.get(endpoints[0].name)!, close, elicitations };
}

type StartedCall = Pick<Parameters<ToolCalls['forward']>[0], 'clientRequestId' | 'params'> & {
  clientCapabilities: Record<string, unknown>;
};

/**
 * Starts one tool call of client session `client-a` to `endpoint` on a fresh ToolCalls: `done`
 * settles when the call has ended, `sink` holds what the client was sent.
 */
function startCall(endpoint: BackendEndpoint, call: StartedCall) {
  const { forwarder, backend, close } = buildForwarder([endpoint]);
  const sink = collectingSink();
  const { clientCapabilities, ...asked } = call;
  const client = forwarder.sessionClient('client-a', clientCapabilities);
  const done = forwarder.forward({ client, backend, ...asked }, sink);
  return { forwarder, sink, done, close };
}

describe('ToolCalls with the example MCP server', () => {
  let server: ExampleMcpServer;
  let endpoint: BackendEndpoint;

  beforeEach(async () => {
    server = await startExampleMcpServer({ port: 0, bearerToken: 'broker-secret' });
    endpoint = {
      name: 'example',
      url: server.url,
      headers: { Authorization: 'Bearer broker-secret' },
    };
  });
  afterEach(async () => {
    await server.close();
  });

  it('streams `count` progress in order with the client’s token, then the result', async () => {
    const { done, sink, close } = startCall(endpoint, {
      clientCapabilities: {},
      clientRequestId: 1,
      params: {
        name: 'count',
        arguments: { steps: 3, delayMs: 10 },
        _meta: { progressToken: 'mine' },
      },
    });
    await done;
    expect(sink.messages).toEqual([
      expect.objectContaining({
        method: 'notifications/progress',
        params: expect.objectContaining({ progressToken: 'mine', progress: 1 }),
      }),
      expect.objectContaining({
        method: 'notifications/progress',
        params: expect.objectContaining({ progressToken: 'mine', progress: 2 }),
      }),
      expect.objectContaining({
        method: 'notifications/progress',
        params: expect.objectContaining({ progressToken: 'mine', progress: 3 }),
      }),
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'counted to 3' }] } },
    ]);
    await close();
  });

  it('relays the `confirm` elicitation and resumes the tool with the answer', async () => {
    const { forwarder, done, sink, close } = startCall(endpoint, {
      clientCapabilities: { elicitation: {} },
      clientRequestId: 'c-1',
      params: { name: 'confirm', arguments: { question: 'Ship it?' } },
    });
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    expect(request.id).toMatch(/^example:/);
    expect(request.params.message).toBe('Ship it?');
    const outcome = await forwarder.answer('client-a', {
      id: request.id,
      result: { action: 'accept', content: { confirmed: true } },
    });
    expect(outcome.outcome).toBe('delivered');
    await done;
    expect(sink.messages[sink.messages.length - 1]).toMatchObject({
      id: 'c-1',
      result: { structuredContent: { action: 'accept', content: { confirmed: true } } },
    });
    await close();
    expect(server.sessionCount()).toBe(0);
  });
});

describe('ToolCalls with server-everything', () => {
  let everything: EverythingServer;
  let endpoint: BackendEndpoint;

  beforeEach(async () => {
    everything = await startEverythingServer();
    endpoint = { name: 'everything', url: everything.url, headers: {} };
  }, 30_000);
  afterEach(async () => {
    await everything.kill();
  });

  it('streams trigger-long-running-operation progress with the client’s token', async () => {
    const { done, sink, close } = startCall(endpoint, {
      clientCapabilities: {},
      clientRequestId: 5,
      params: {
        name: 'trigger-long-running-operation',
        arguments: { duration: 0.3, steps: 3 },
        _meta: { progressToken: 42 },
      },
    });
    await done;
    const progress = sink.messages
      .filter(m => m.method === 'notifications/progress')
      .map(m => m.params);
    expect(progress).toEqual([
      { progress: 1, total: 3, progressToken: 42 },
      { progress: 2, total: 3, progressToken: 42 },
      { progress: 3, total: 3, progressToken: 42 },
    ]);
    expect(sink.messages[sink.messages.length - 1]).toMatchObject({
      id: 5,
      result: { content: [{ type: 'text' }] },
    });
    await close();
  }, 30_000);

  it('relays trigger-elicitation-request (offered because the client declared elicitation)', async () => {
    const { forwarder, done, sink, close } = startCall(endpoint, {
      clientCapabilities: { elicitation: {} },
      clientRequestId: 6,
      params: { name: 'trigger-elicitation-request', arguments: {} },
    });
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    expect(request.id).toMatch(/^everything:/);
    expect(
      (await forwarder.answer('client-a', { id: request.id, result: { action: 'decline' } }))
        .outcome,
    ).toBe('delivered');
    await done;
    const final = sink.messages[sink.messages.length - 1];
    expect(final.id).toBe(6);
    expect(JSON.stringify(final.result)).toMatch(/decline/);
    await close();
  }, 30_000);

  it('ends the client’s call with an error within seconds when the server is killed mid-call', async () => {
    const { forwarder, done, sink, close } = startCall(endpoint, {
      clientCapabilities: {},
      clientRequestId: 7,
      params: {
        name: 'trigger-long-running-operation',
        arguments: { duration: 30, steps: 30 },
        _meta: { progressToken: 'p' },
      },
    });
    await sink.waitFor(m => m.method === 'notifications/progress', 10_000);
    await everything.kill();
    await done; // ended by the lost connection (the reason below), not by a call timeout
    expect(sink.messages[sink.messages.length - 1]).toMatchObject({
      id: 7,
      error: { code: -32000, data: { backend: 'everything', reason: 'connection-lost' } },
    });
    expect(forwarder.inFlightCount()).toBe(0);
    await close();
  }, 30_000);
});
