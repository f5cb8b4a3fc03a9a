/*
 * `input_required` rounds of 2026-07-28 callers (spec §9) against the raw test backend, which
 * records exactly which ids and answers reach it. The client side is ToolCalls' own API.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { ElicitationIdMap } from './ElicitationIdMap';
import type { ForwardedToolCall } from './ToolCall';
import { ToolCalls } from './ToolCalls';
import type { BackendEndpoint } from '../backend/backendTransport';
import { channelsOf } from '../backend/testing/testBackends';
import { CollectingSink, collectingSink } from './testing/collectingSink';
import { RequestStateSealer } from '../inputRequests/RequestStateSealer';
import { fixedHmacKeys } from '../inputRequests/requestStateKey';
import { MemoryRequestStateNonceStore } from '../inputRequests/requestStateNonces';
import { waitFor } from '../testing/waitFor';

const KEY = Buffer.alloc(32, 7);
const ALICE = 'user:default/alice';

describe('ToolCalls: input_required rounds for 2026-07-28 callers (raw backend)', () => {
  let backend: RawMcpBackend;
  let endpoint: BackendEndpoint;
  let forwarder: ToolCalls;

  function build(ttlMs = 60_000) {
    const logger = mockServices.logger.mock();
    forwarder = new ToolCalls({
      logger,
      elicitations: new ElicitationIdMap({ ttlMs }),
      backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
      closeSessionsOf: async () => undefined,
      toolCallTimeoutMs: 10_000,
      requestTimeoutMs: 5_000,
      requestStates: new RequestStateSealer({
        keys: fixedHmacKeys(KEY),
        ttlMs,
        nonces: new MemoryRequestStateNonceStore(),
      }),
    });
  }

  beforeEach(async () => {
    backend = await startRawMcpBackend();
    endpoint = { name: 'raw', url: backend.url, headers: {} };
    build();
  });

  afterEach(async () => {
    await forwarder.close();
    await backend.close();
  });

  const binding = (args: Record<string, unknown>, principal = ALICE) => ({
    principal,
    method: 'tools/call',
    name: 'raw_elicit',
    arguments: args,
  });

  const modernCall = (
    args: Record<string, unknown>,
    declared: Record<string, unknown> = { elicitation: {}, sampling: {}, roots: {} },
    progressToken?: string,
  ): ForwardedToolCall => ({
    client: forwarder.statelessClient({
      owner: 'pooled:alice',
      capabilities: { elicitation: {}, sampling: {}, roots: {} },
      caller: { declaredCapabilities: declared, binding: binding(args) },
    }),
    backend: channelsOf(endpoint),
    clientRequestId: 1,
    params: {
      name: 'elicit',
      arguments: args,
      ...(progressToken === undefined ? {} : { _meta: { progressToken } }),
    },
  });

  const responsesReachingBackend = () => backend.requests.filter(r => r.method === undefined);

  /** Starts a call and returns its first leg's answer (the input_required result). */
  async function firstRound(call: ForwardedToolCall) {
    const sink = collectingSink();
    await forwarder.forward(call, sink);
    expect(sink.ended).toBe(true);
    expect(sink.messages).toHaveLength(1);
    return sink.messages[0];
  }

  it.each([
    ['string', '"s-1"'],
    ['integer', '42'],
    ['float', '7.5'],
    ['float with a zero fraction', '7.0'],
  ])(
    'answers a %s elicitation id through input_required with the original token',
    async (_, rawId) => {
      const args = { id: rawId };
      const first = await firstRound(modernCall(args));
      expect(first).toMatchObject({
        id: 1,
        result: {
          resultType: 'input_required',
          inputRequests: {
            'elicitation-1': {
              method: 'elicitation/create',
              params: { mode: 'form', message: `Answer request ${rawId}` },
            },
          },
          requestState: expect.stringMatching(/^v1\./),
        },
      });
      expect(first.result.inputRequests['elicitation-1']).not.toHaveProperty('id');
      const sink = collectingSink();
      await forwarder.resume(
        {
          binding: binding(args),
          requestState: first.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
          clientRequestId: 'retry-1',
        },
        sink,
      );
      expect(sink.ended).toBe(true);
      expect(sink.messages.at(-1)).toMatchObject({
        id: 'retry-1',
        result: { structuredContent: { sentId: rawId, receivedId: rawId } },
      });
      expect(backend.answers).toEqual([
        expect.objectContaining({
          sentId: rawId,
          receivedId: rawId,
          body: { action: 'accept', content: { ok: true } },
        }),
      ]);
    },
  );

  it('puts sampling and roots requests to the client the same way', async () => {
    for (const [method, key, answer] of [
      [
        'sampling/createMessage',
        'sampling-1',
        { role: 'assistant', model: 'm', content: { type: 'text', text: 'hi' } },
      ],
      ['roots/list', 'roots-1', { roots: [{ uri: 'file:///a' }] }],
    ] as const) {
      const args = { id: '9', method };
      const first = await firstRound(modernCall(args));
      expect(first.result.inputRequests).toEqual({
        [key]: expect.objectContaining({ method }),
      });
      const sink = collectingSink();
      await forwarder.resume(
        {
          binding: binding(args),
          requestState: first.result.requestState,
          inputResponses: { [key]: answer },
          clientRequestId: 2,
        },
        sink,
      );
      expect(sink.messages.at(-1)).toMatchObject({
        id: 2,
        result: { structuredContent: { receivedId: '9', answer } },
      });
    }
  });

  it('asks two requests the backend sent together in one round, and re-asks a missing answer', async () => {
    const args = { id: '1', alsoId: '"two"' };
    const first = await firstRound(modernCall(args));
    expect(Object.keys(first.result.inputRequests).sort()).toEqual([
      'elicitation-1',
      'elicitation-2',
    ]);
    // Only one answer: the other request comes back in another round.
    const second = collectingSink();
    await forwarder.resume(
      {
        binding: binding(args),
        requestState: first.result.requestState,
        inputResponses: { 'elicitation-1': { action: 'decline' } },
        clientRequestId: 2,
      },
      second,
    );
    expect(second.messages).toEqual([
      expect.objectContaining({
        id: 2,
        result: expect.objectContaining({
          resultType: 'input_required',
          inputRequests: { 'elicitation-2': expect.anything() },
        }),
      }),
    ]);
    const third = collectingSink();
    await forwarder.resume(
      {
        binding: binding(args),
        requestState: second.messages[0].result.requestState,
        inputResponses: { 'elicitation-2': { action: 'cancel' } },
        clientRequestId: 3,
      },
      third,
    );
    expect(third.messages.at(-1)).toMatchObject({
      id: 3,
      result: {
        structuredContent: {
          receivedId: '1',
          answer: { action: 'decline' },
          also: { receivedId: '"two"', body: { action: 'cancel' } },
        },
      },
    });
  });

  it('ends the call with -32021 naming a capability the client did not declare, cancelled at the backend', async () => {
    const sink = collectingSink();
    const cancelledBefore = backend.cancellations.length;
    const answersBefore = responsesReachingBackend().length;
    await forwarder.forward(
      modernCall({ id: '5', method: 'roots/list' }, { elicitation: {} }),
      sink,
    );
    expect(sink.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        error: expect.objectContaining({
          code: -32021,
          message: expect.stringContaining('roots'),
          data: { requiredCapabilities: { roots: {} } },
        }),
      },
    ]);
    await waitFor(
      () => backend.cancellations.length > cancelledBefore,
      'the cancellation of the backend call',
    );
    // The backend was never answered: the call ended instead.
    expect(responsesReachingBackend()).toHaveLength(answersBefore);
  });

  it('refuses tampered, foreign and replayed states, and nothing reaches the backend', async () => {
    const args = { id: '3' };
    const first = await firstRound(modernCall(args));
    const state: string = first.result.requestState;
    const before = responsesReachingBackend().length;
    const sinks: CollectingSink[] = [];
    const retry = (overrides: Record<string, unknown>) => {
      const sink = collectingSink();
      sinks.push(sink);
      return forwarder.resume(
        {
          binding: binding(args),
          requestState: state,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
          clientRequestId: 2,
          ...overrides,
        },
        sink,
      );
    };
    const tampered = `${state.slice(0, -2)}${state.endsWith('AA') ? 'BB' : 'AA'}`;
    await expect(retry({ requestState: tampered })).rejects.toMatchObject({ reason: 'tampered' });
    await expect(retry({ binding: binding(args, 'user:default/mallory') })).rejects.toMatchObject({
      reason: 'foreign-principal',
    });
    await expect(retry({ binding: binding({ id: '4' }) })).rejects.toMatchObject({
      reason: 'foreign-arguments',
    });
    expect(responsesReachingBackend().length).toBe(before);
    // A refusal is thrown before the sink is used: its stream never opens, and the router can
    // still answer a plain HTTP 400 (brokerInputRequired.test.ts checks that on the wire).
    expect(sinks.map(sink => [sink.messages, sink.ended])).toEqual([
      [[], false],
      [[], false],
      [[], false],
    ]);
    await retry({});
    expect(sinks[3].messages.at(-1)).toMatchObject({ id: 2, result: expect.anything() });
    expect(responsesReachingBackend().length).toBe(before + 1);
    await expect(retry({})).rejects.toMatchObject({ reason: 'replayed' });
    expect(responsesReachingBackend().length).toBe(before + 1);
  });

  it('cancels a held call at its backend when the client does not come back within the TTL', async () => {
    await forwarder.close();
    build(300);
    const args = { id: '11' };
    const first = await firstRound(modernCall(args));
    await waitFor(() => backend.cancellations.length > 0, 'the cancellation of the held call');
    const call = backend.requests.find(r => r.method === 'tools/call')!;
    expect(backend.cancellations[0]).toMatchObject({ requestId: call.id });
    await waitFor(() => forwarder.inFlightCount() === 0, 'the call to end');
    await expect(
      forwarder.resume(
        {
          binding: binding(args),
          requestState: first.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'decline' } },
          clientRequestId: 2,
        },
        collectingSink(),
      ),
    ).rejects.toMatchObject({ reason: 'expired' });
    expect(backend.answers).toEqual([]);
  });

  it('streams progress on the retry with the retry’s own progress token', async () => {
    const args = { id: '21' };
    const first = await firstRound(modernCall(args, undefined, 'first-token'));
    const sink = collectingSink();
    await forwarder.resume(
      {
        binding: binding(args),
        requestState: first.result.requestState,
        inputResponses: { 'elicitation-1': { action: 'decline' } },
        clientRequestId: 2,
        progressToken: 'retry-token',
      },
      sink,
    );
    expect(sink.messages).toEqual([
      {
        jsonrpc: '2.0',
        method: 'notifications/progress',
        params: { progressToken: 'retry-token', progress: 1, total: 1 },
      },
      expect.objectContaining({ id: 2, result: expect.anything() }),
    ]);
    // The backend only ever saw the first request's token.
    const call = backend.requests.find(r => r.method === 'tools/call')!;
    expect(JSON.parse(call.text).params._meta).toEqual({ progressToken: 'first-token' });
  });
});
