/*
 * The client half of a 2026-07-28 caller that cannot be asked anything (a broker without
 * `requestState` sealing), through ToolCalls against the raw test backend, which reports what
 * its request got back.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { ElicitationIdMap } from './ElicitationIdMap';
import { ToolCalls } from './ToolCalls';
import type { BackendEndpoint } from '../backend/backendTransport';
import { channelsOf } from '../backend/testing/testBackends';
import { collectingSink } from './testing/collectingSink';

describe('UnaskableClient (ToolCalls without requestState sealing, raw backend)', () => {
  let backend: RawMcpBackend;
  let endpoint: BackendEndpoint;
  let calls: ToolCalls;

  beforeEach(async () => {
    backend = await startRawMcpBackend();
    endpoint = { name: 'raw', url: backend.url, headers: {} };
    calls = new ToolCalls({
      logger: mockServices.logger.mock(),
      elicitations: new ElicitationIdMap({ ttlMs: 60_000 }),
      backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
      closeSessionsOf: async () => undefined,
      toolCallTimeoutMs: 10_000,
      requestTimeoutMs: 5_000,
    });
  });

  afterEach(async () => {
    await calls.close();
    await backend.close();
  });

  it('refuses the backend’s request at once with -32601 and releases the caller when the call ends', async () => {
    let released = 0;
    const sink = collectingSink();
    await calls.forward(
      {
        client: calls.statelessClient({
          owner: 'stateless:alice',
          capabilities: { elicitation: {} },
          caller: {
            declaredCapabilities: { elicitation: {} },
            binding: { principal: 'user:default/alice', method: 'tools/call', name: 'raw/elicit' },
          },
          onEnd: () => {
            released += 1;
          },
        }),
        backend: channelsOf(endpoint),
        clientRequestId: 3,
        params: { name: 'elicit', arguments: { id: '9' } },
      },
      sink,
    );
    // Nothing was put to the client; the tool went on with the refusal as its answer.
    expect(sink.messages.filter(m => m.method === 'elicitation/create')).toEqual([]);
    const final = sink.messages[sink.messages.length - 1];
    expect(final.id).toBe(3);
    expect(final.result.structuredContent).toMatchObject({
      sentId: '9',
      receivedId: '9',
      answer: {
        code: -32601,
        message: expect.stringContaining('does not relay server-to-client requests'),
      },
    });
    expect(released).toBe(1);
  });
});
