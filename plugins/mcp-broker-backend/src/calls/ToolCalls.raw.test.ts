/*
 * The call machinery against the raw test backend (no SDK on the backend side), which records
 * exactly what reaches it: ids with their JSON type, cancellations, sessions and headers.
 * The client side here is ToolCalls' own API (the router is tested end to end elsewhere).
 */
import { mockServices } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { ElicitationIdMap } from './ElicitationIdMap';
import { ToolCalls } from './ToolCalls';
import type { BackendEndpoint } from '../backend/backendTransport';
import { channelsOf } from '../backend/testing/testBackends';
import { collectingSink } from './testing/collectingSink';
import {
  PERSONAL_CREDENTIAL_ERROR_CODE,
  PersonalCredentialError,
} from '../identity/credentialErrors';

describe('ToolCalls with the raw backend', () => {
  let backend: RawMcpBackend;
  let endpoint: BackendEndpoint;
  let elicitations: ElicitationIdMap;
  let forwarder: ToolCalls;

  function build(options: { ttlMs?: number; toolCallTimeoutMs?: number } = {}) {
    const logger = mockServices.logger.mock();
    elicitations = new ElicitationIdMap({ ttlMs: options.ttlMs ?? 60_000 });
    forwarder = new ToolCalls({
      logger,
      elicitations,
      backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
      closeSessionsOf: async () => undefined,
      toolCallTimeoutMs: options.toolCallTimeoutMs ?? 10_000,
      requestTimeoutMs: 5_000,
    });
  }

  beforeEach(async () => {
    backend = await startRawMcpBackend();
    endpoint = {
      name: 'raw',
      url: backend.url,
      headers: { authorization: 'Bearer broker-secret' },
    };
    build();
  });

  afterEach(async () => {
    await forwarder.close();
    await backend.close();
  });

  const call = (
    clientSessionId: string,
    id: string | number,
    name: string,
    args: Record<string, unknown> = {},
    meta?: Record<string, unknown>,
  ) => ({
    client: forwarder.sessionClient(clientSessionId, { elicitation: {} }),
    backend: channelsOf(endpoint),
    clientRequestId: id,
    params: { name, arguments: args, ...(meta ? { _meta: meta } : {}) },
  });

  const responsesReachingBackend = () => backend.requests.filter(r => r.method === undefined);

  it.each([
    ['a string', '"s-1"', 'string'],
    ['an integer', '42', 'integer'],
    ['a float', '7.5', 'float'],
    ['a float written with a zero fraction', '7.0', 'float'],
  ])(
    'returns the answer to %s elicitation id with its exact JSON token',
    async (_, rawId, type) => {
      const sink = collectingSink();
      const done = forwarder.forward(call('client-a', 1, 'elicit', { id: rawId }), sink);
      const request = await sink.waitFor(m => m.method === 'elicitation/create');
      expect(request.id).toMatch(/^raw:[A-Za-z0-9_-]{22}$/);
      const outcome = await forwarder.answer('client-a', {
        id: request.id,
        result: { action: 'accept', content: { ok: true } },
      });
      expect(outcome.outcome).toBe('delivered');
      await done;
      const final = sink.messages[sink.messages.length - 1];
      expect(final.id).toBe(1);
      expect(final.result.structuredContent).toEqual({
        sentId: rawId,
        receivedId: rawId,
        receivedType: type,
        answer: { action: 'accept', content: { ok: true } },
      });
      expect(sink.ended).toBe(true);
    },
  );

  it('accepts an answer once; a replay is 404 and never reaches the backend', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 'req-1', 'elicit', { id: '5' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    const answer = { id: request.id, result: { action: 'decline' } };
    const [first, second] = await Promise.all([
      forwarder.answer('client-a', answer),
      forwarder.answer('client-a', answer),
    ]);
    expect([first.outcome, second.outcome].sort()).toEqual(['delivered', 'unknown-id']);
    await done;
    const third = await forwarder.answer('client-a', answer);
    expect(third.outcome).toBe('unknown-id');
    expect(third.error?.message).toMatch(/unknown, expired or already answered/);
    expect(responsesReachingBackend()).toHaveLength(1);
  });

  /** A second replica's calls: the same (shared) ids, no backend session of the caller's. */
  function otherReplica(): ToolCalls {
    return new ToolCalls({
      logger: mockServices.logger.mock(),
      elicitations,
      backendOf: name => (name === endpoint.name ? channelsOf(endpoint) : undefined),
      closeSessionsOf: async () => undefined,
      toolCallTimeoutMs: 10_000,
      requestTimeoutMs: 5_000,
    });
  }

  it('sends an answer landing where the backend session is not open with the credential the answering request obtains', async () => {
    const other = otherReplica();
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 3, 'elicit', { id: '4' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    const asked: string[] = [];
    const outcome = await other.answer(
      'client-a',
      { id: request.id, result: { action: 'accept', content: {} } },
      async server => {
        asked.push(server);
        return { 'x-api-key': 'alice-key' };
      },
    );
    expect(outcome.outcome).toBe('delivered');
    await done;
    expect(asked).toEqual(['raw']);
    const [answer] = responsesReachingBackend();
    expect(answer.headers['x-api-key']).toBe('alice-key');
    expect(answer.headers.authorization).toBeUndefined();
    await other.close();
  });

  it('fails an answer whose person’s credential cannot be had instead of sending it with the broker’s', async () => {
    const other = otherReplica();
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 4, 'elicit', { id: '6' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    const outcome = await other.answer(
      'client-a',
      { id: request.id, result: { action: 'accept', content: {} } },
      async () => {
        throw new PersonalCredentialError(
          'raw',
          'userCredential',
          'Store your credential for raw.',
          'credential-required',
        );
      },
    );
    expect(outcome).toEqual({
      outcome: 'credential-failed',
      error: {
        code: PERSONAL_CREDENTIAL_ERROR_CODE,
        message: 'Your answer was not sent to MCP server "raw": Store your credential for raw.',
        data: { server: 'raw', reason: 'credential-required' },
      },
    });
    expect(responsesReachingBackend()).toHaveLength(0);
    // Nothing was sent: the id is still the client's to answer.
    const again = await forwarder.answer('client-a', {
      id: request.id,
      result: { action: 'decline' },
    });
    expect(again.outcome).toBe('delivered');
    await done;
    expect(responsesReachingBackend()).toHaveLength(1);
    await other.close();
  });

  it('refuses an answer after the elicitation TTL with 404; the client’s answer never reaches the backend', async () => {
    build({ ttlMs: 150 });
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 2, 'elicit', { id: '9' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    // Expired: the broker has told the backend so.
    await waitUntil(() => responsesReachingBackend().length === 1);
    const outcome = await forwarder.answer('client-a', {
      id: request.id,
      result: { action: 'accept', content: {} },
    });
    expect(outcome.outcome).toBe('unknown-id');
    await done;
    // The only response the backend got is the broker's expiry notice, not the late answer.
    expect(responsesReachingBackend()).toHaveLength(1);
    expect(responsesReachingBackend()[0].text).toContain('"error":{"code":-32001');
    expect(responsesReachingBackend()[0].text).not.toContain('accept');
  });

  it('tells the backend, with its own id, that an elicitation expired unanswered, so the tool goes on', async () => {
    build({ ttlMs: 150 });
    const sink = collectingSink();
    // The backend answers the call only once it heard of the expiry (its result says so below).
    await forwarder.forward(call('client-a', 16, 'elicit', { id: '8.25' }), sink);
    const final = sink.messages[sink.messages.length - 1];
    expect(final.id).toBe(16);
    expect(final.result.structuredContent).toMatchObject({
      sentId: '8.25',
      receivedId: '8.25',
      receivedType: 'float',
      answer: { code: -32001, message: expect.stringContaining('mcpBroker.elicitationTtl') },
    });
  });

  it('refuses an answer from another client session with 404 and keeps the id for its owner', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 3, 'elicit', { id: '"x"' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    const foreign = await forwarder.answer('client-b', {
      id: request.id,
      result: { action: 'accept', content: {} },
    });
    expect(foreign.outcome).toBe('unknown-id');
    expect(foreign.error).toMatchObject({ code: -32600 });
    expect(responsesReachingBackend()).toHaveLength(0);
    expect(
      (await forwarder.answer('client-a', { id: request.id, result: { action: 'cancel' } }))
        .outcome,
    ).toBe('delivered');
    await done;
  });

  it('gives two concurrent calls on one session their own elicitations', async () => {
    const sinkOne = collectingSink();
    const sinkTwo = collectingSink();
    const one = forwarder.forward(call('client-a', 10, 'elicit', { id: '1' }), sinkOne);
    const two = forwarder.forward(call('client-a', 11, 'elicit', { id: '2' }), sinkTwo);
    const requestOne = await sinkOne.waitFor(m => m.method === 'elicitation/create');
    const requestTwo = await sinkTwo.waitFor(m => m.method === 'elicitation/create');
    expect(requestOne.params.message).toBe('Answer request 1');
    expect(requestTwo.params.message).toBe('Answer request 2');
    expect(sinkOne.messages.filter(m => m.method === 'elicitation/create')).toHaveLength(1);
    expect(sinkTwo.messages.filter(m => m.method === 'elicitation/create')).toHaveLength(1);
    // Answer in the opposite order: each answer must resume its own call.
    await forwarder.answer('client-a', {
      id: requestTwo.id,
      result: { action: 'accept', content: { ok: false } },
    });
    await forwarder.answer('client-a', {
      id: requestOne.id,
      result: { action: 'accept', content: { ok: true } },
    });
    await Promise.all([one, two]);
    const finalOne = sinkOne.messages.find(m => m.id === 10)!;
    const finalTwo = sinkTwo.messages.find(m => m.id === 11)!;
    expect(finalOne.result.structuredContent).toMatchObject({
      sentId: '1',
      answer: { content: { ok: true } },
    });
    expect(finalTwo.result.structuredContent).toMatchObject({
      sentId: '2',
      answer: { content: { ok: false } },
    });
    // One backend session served both calls.
    expect(backend.requests.filter(r => r.method === 'initialize')).toHaveLength(1);
  });

  it('streams progress with the client’s own token, in order, before the result', async () => {
    const sink = collectingSink();
    await forwarder.forward(
      call('client-a', 4, 'progress', { steps: 4 }, { progressToken: 'client-token' }),
      sink,
    );
    expect(sink.messages.map(m => m.method ?? `result ${m.id}`)).toEqual([
      'notifications/progress',
      'notifications/progress',
      'notifications/progress',
      'notifications/progress',
      'result 4',
    ]);
    expect(sink.messages.slice(0, 4).map(m => [m.params.progressToken, m.params.progress])).toEqual(
      [
        ['client-token', 1],
        ['client-token', 2],
        ['client-token', 3],
        ['client-token', 4],
      ],
    );
  });

  it('forwards the client’s cancellation with the backend’s request id and ends the call without a result', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(
      call('client-a', 'client-call-7', 'wait_for_cancel', {}, { progressToken: 1 }),
      sink,
    );
    await sink.waitFor(m => m.method === 'notifications/progress');
    expect(
      forwarder.cancel('client-a', { requestId: 'client-call-7', reason: 'user pressed stop' }),
    ).toBe(true);
    await done;
    const backendCall = backend.requests.find(r => r.method === 'tools/call')!;
    await waitUntil(() => backend.cancellations.length === 1);
    expect(backend.cancellations[0]).toMatchObject({
      requestId: backendCall.id,
      reason: 'user pressed stop',
    });
    expect(backendCall.id).not.toBe('"client-call-7"');
    expect(sink.messages.some(m => m.id === 'client-call-7')).toBe(false);
    expect(forwarder.inFlightCount()).toBe(0);
  });

  /** A backend that takes notifications only after a while, as a busy one does. */
  async function useSlowNotificationBackend() {
    await forwarder.close();
    await backend.close();
    backend = await startRawMcpBackend({ notificationDelayMs: 200 });
    endpoint = { name: 'raw', url: backend.url, headers: {} };
    build();
  }

  it('sends the backend its cancellation before closing the call’s stream (a backend that ignores it)', async () => {
    await useSlowNotificationBackend();
    const sink = collectingSink();
    const done = forwarder.forward(
      call('client-a', 'hold-1', 'hold', {}, { progressToken: 1 }),
      sink,
    );
    await sink.waitFor(m => m.method === 'notifications/progress');
    expect(forwarder.cancel('client-a', { requestId: 'hold-1' })).toBe(true);
    await done;
    const backendCall = backend.requests.find(r => r.method === 'tools/call')!;
    await waitUntil(() => backend.callEvents.length === 2);
    expect(backend.callEvents).toEqual([
      { type: 'cancelled', requestId: backendCall.id },
      { type: 'stream-closed', requestId: backendCall.id },
    ]);
    expect(sink.messages.some(m => m.id === 'hold-1')).toBe(false);
  });

  it('cancels before closing also when the client disconnects', async () => {
    await useSlowNotificationBackend();
    const sink = collectingSink();
    const done = forwarder.forward(
      call('client-a', 'hold-2', 'hold', {}, { progressToken: 1 }),
      sink,
    );
    await sink.waitFor(m => m.method === 'notifications/progress');
    sink.disconnect();
    await done;
    await waitUntil(() => backend.callEvents.length === 2);
    expect(backend.callEvents.map(e => e.type)).toEqual(['cancelled', 'stream-closed']);
  });

  it('does not cancel a call of another client session that uses the same request id', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 5, 'wait_for_cancel'), sink);
    await waitUntil(() => backend.requests.some(r => r.method === 'tools/call'));
    expect(forwarder.cancel('client-b', { requestId: 5 })).toBe(false);
    expect(forwarder.inFlightCount()).toBe(1);
    sink.disconnect();
    await done;
  });

  it('cancels the backend call and drops its pending elicitation when the client disconnects', async () => {
    const sink = collectingSink();
    const done = forwarder.forward(call('client-a', 6, 'elicit', { id: '77' }), sink);
    const request = await sink.waitFor(m => m.method === 'elicitation/create');
    expect(await elicitations.peek(request.id)).toBeDefined();
    sink.disconnect();
    await done;
    expect(await elicitations.peek(request.id)).toBeUndefined();
    await waitUntil(() => backend.cancellations.length === 1);
    expect(backend.cancellations[0].requestId).toBe(
      backend.requests.find(r => r.method === 'tools/call')!.id,
    );
    expect(
      (await forwarder.answer('client-a', { id: request.id, result: { action: 'accept' } }))
        .outcome,
    ).toBe('unknown-id');
    expect(responsesReachingBackend()).toHaveLength(0);
  });

  it('ends a call whose backend breaks the connection with a connection-closed error within seconds', async () => {
    const sink = collectingSink();
    // Ended by the broken connection (reason connection-lost), not by a call timeout.
    await forwarder.forward(call('client-a', 8, 'crash', {}, { progressToken: 'p' }), sink);
    const final = sink.messages[sink.messages.length - 1];
    expect(final).toMatchObject({
      id: 8,
      error: { code: -32000, data: { backend: 'raw', reason: 'connection-lost' } },
    });
  });

  it('cuts off a backend that streams an endless message instead of buffering it', async () => {
    const sink = collectingSink();
    await forwarder.forward(call('client-a', 15, 'flood', { megabytes: 20 }), sink);
    expect(sink.messages).toEqual([
      expect.objectContaining({
        id: 15,
        error: expect.objectContaining({
          code: -32603,
          data: { backend: 'raw', reason: 'malformed-response' },
        }),
      }),
    ]);
  }, 20_000);

  it('answers a call that outlives toolCallTimeout with a timeout error and cancels it at the backend', async () => {
    build({ toolCallTimeoutMs: 300 });
    const sink = collectingSink();
    await forwarder.forward(call('client-a', 9, 'wait_for_cancel'), sink);
    expect(sink.messages[sink.messages.length - 1]).toMatchObject({
      id: 9,
      error: {
        code: -32001,
        message: expect.stringContaining('mcpBroker.toolCallTimeout'),
        data: { reason: 'timeout' },
      },
    });
    await waitUntil(() => backend.cancellations.length === 1);
  });

  it('maps an unreachable backend to a JSON-RPC error naming it', async () => {
    await backend.close();
    const sink = collectingSink();
    await forwarder.forward(call('client-a', 12, 'progress'), sink);
    expect(sink.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 12,
        error: {
          code: -32603,
          message: expect.stringMatching(/^MCP server "raw" is unreachable/),
          data: { backend: 'raw', reason: 'unreachable' },
        },
      },
    ]);
  });

  it('re-initializes a backend session the backend forgot, once, before anything ran', async () => {
    await forwarder.forward(call('client-a', 13, 'progress', { steps: 1 }), collectingSink());
    const [first] = backend.sessionIds();
    // The backend forgets the session (as after a restart).
    await fetch(backend.url, { method: 'DELETE', headers: { 'mcp-session-id': first } });
    const sink = collectingSink();
    await forwarder.forward(call('client-a', 14, 'progress', { steps: 1 }), sink);
    expect(sink.messages[sink.messages.length - 1]).toMatchObject({
      id: 14,
      result: { content: [{ text: '1 steps' }] },
    });
    expect(backend.requests.filter(r => r.method === 'initialize')).toHaveLength(2);
  });
});

async function waitUntil(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise(resolve => setTimeout(resolve, 20));
  }
}
