/*
 * `input_required` end to end (spec §9): a 2025-era backend's elicitation, sampling and roots
 * requests during a 2026-07-28 client's call, through the real backend process. The official SDK
 * v2 client (pinned to 2026-07-28) answers the rounds itself with its handlers; raw HTTP shows
 * the wire (the round, the 400 refusals). The raw test backend records which ids and answers
 * reach it, so "nothing reached the backend" is observed, not assumed.
 */
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';
import { connectModernClient, modernToolCall } from './__testUtils__/modernBrokerClient';

const ELICITATION_TTL_MS = 3_000;
const ALL_INPUTS = { elicitation: {}, sampling: {}, roots: {} };

describe('input_required for 2026-07-28 clients (real backend process, SDK v2 client)', () => {
  let backend: BackendProcess;
  let raw: RawMcpBackend;
  const tokens: Record<string, string> = {};
  const closers: Array<() => Promise<unknown>> = [];

  beforeAll(async () => {
    raw = await startRawMcpBackend();
    backend = await startBackendProcess({
      config: {
        // Access is brokerPermissions.test.ts's concern: here two users may use every tool, so
        // a state of one can be tried by the other.
        permission: { enabled: false },
        mcpBroker: {
          servers: [{ name: 'raw', url: raw.url }],
          elicitationTtl: { milliseconds: ELICITATION_TTL_MS },
        },
      },
    });
    for (const user of ['alice', 'carol']) tokens[user] = await backend.signIn(user);
    const client = await modernClient('carol');
    await waitFor(
      async () => (await client.listTools()).tools.some(tool => tool.name === 'raw_elicit'),
      30_000,
      'the raw backend to be listed',
    );
  }, 120_000);

  afterAll(async () => {
    for (const close of closers) await close();
    await backend?.stop();
    await raw?.close();
  }, 30_000);

  async function modernClient(user: string, capabilities: Record<string, unknown> = {}) {
    const client = await connectModernClient(backend.baseUrl, tokens[user], capabilities);
    closers.push(() => client.close().catch(() => undefined));
    return client;
  }

  /** A raw 2026-07-28 `tools/call` declaring every input capability. */
  const rawToolCall = (user: string, id: number, params: Record<string, unknown>) =>
    modernToolCall(backend.baseUrl, tokens[user], id, params, {
      'io.modelcontextprotocol/clientCapabilities': ALL_INPUTS,
    });

  const answersFor = (sentId: string) => raw.answers.filter(a => a.sentId === sentId);

  it.each([
    ['string', '"ask-1"'],
    ['integer', '4242'],
    ['float', '42.5'],
  ])(
    'answers a %s elicitation id through input_required, the id reaching the backend unchanged',
    async (type, id) => {
      const client = await modernClient('carol', { elicitation: {} });
      const asked: unknown[] = [];
      client.setRequestHandler('elicitation/create', async request => {
        asked.push(request.params);
        return { action: 'accept', content: { ok: true } };
      });
      const result = await client.callTool({ name: 'raw_elicit', arguments: { id } });
      expect(asked).toEqual([expect.objectContaining({ message: `Answer request ${id}` })]);
      expect(result.structuredContent).toMatchObject({
        sentId: id,
        receivedId: id,
        receivedType: type,
        answer: { action: 'accept', content: { ok: true } },
      });
    },
    30_000,
  );

  it('relays sampling and roots requests the same way', async () => {
    const client = await modernClient('carol', { sampling: {}, roots: {} });
    client.setRequestHandler('sampling/createMessage', async () => ({
      role: 'assistant',
      model: 'e2e-model',
      content: { type: 'text', text: 'sampled' },
    }));
    client.setRequestHandler('roots/list', async () => ({
      roots: [{ uri: 'file:///e2e', name: 'e2e' }],
    }));
    const sampled = await client.callTool({
      name: 'raw_elicit',
      arguments: { id: '"sample-1"', method: 'sampling/createMessage' },
    });
    expect(sampled.structuredContent).toMatchObject({
      receivedId: '"sample-1"',
      answer: { model: 'e2e-model', content: { text: 'sampled' } },
    });
    const rooted = await client.callTool({
      name: 'raw_elicit',
      arguments: { id: '77', method: 'roots/list' },
    });
    expect(rooted.structuredContent).toMatchObject({
      receivedId: '77',
      receivedType: 'integer',
      answer: { roots: [{ uri: 'file:///e2e', name: 'e2e' }] },
    });
  }, 30_000);

  it('puts two requests the backend sent together into one round with two keys', async () => {
    const { status, response } = await rawToolCall('carol', 1, {
      name: 'raw_elicit',
      arguments: { id: '501', alsoId: '502' },
    });
    expect(status).toBe(200);
    expect(response.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: {
        'elicitation-1': { method: 'elicitation/create', params: { mode: 'form' } },
        'elicitation-2': { method: 'elicitation/create', params: { mode: 'form' } },
      },
      requestState: expect.any(String),
    });
    const retry = await rawToolCall('carol', 2, {
      name: 'raw_elicit',
      arguments: { id: '501', alsoId: '502' },
      requestState: response.result.requestState,
      inputResponses: {
        'elicitation-1': { action: 'decline' },
        'elicitation-2': { action: 'cancel' },
      },
    });
    expect(retry.response.result).toMatchObject({
      resultType: 'complete',
      structuredContent: { receivedId: '501', also: { receivedId: '502' } },
    });
  }, 30_000);

  describe('refused requestState: 400, and nothing reaches the backend', () => {
    /** Starts a call that asks for input; returns its requestState and retry params. */
    async function heldCall(sentId: string) {
      const args = { id: sentId };
      const { response } = await rawToolCall('carol', 1, { name: 'raw_elicit', arguments: args });
      expect(response.result.resultType).toBe('input_required');
      return {
        state: response.result.requestState as string,
        retry: {
          name: 'raw_elicit',
          arguments: args,
          requestState: response.result.requestState as string,
          inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
        },
      };
    }

    async function expectRefused(
      user: string,
      params: Record<string, unknown>,
      reason: string,
      sentId: string,
    ) {
      const before = raw.requests.length;
      const { status, response } = await rawToolCall(user, 9, params);
      expect(status).toBe(400);
      expect(response.error).toMatchObject({
        code: -32602,
        message: expect.stringContaining('requestState'),
        data: { reason },
      });
      expect(raw.requests.length).toBe(before);
      expect(answersFor(sentId)).toEqual([]);
    }

    it('refuses a tampered, a foreign-principal and a foreign-arguments state', async () => {
      const { state, retry } = await heldCall('601');
      const [version, payload, mac] = state.split('.');
      const flipped = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
      await expectRefused(
        'carol',
        { ...retry, requestState: `${version}.${payload}.${flipped}` },
        'tampered',
        '601',
      );
      await expectRefused('alice', retry, 'foreign-principal', '601');
      await expectRefused(
        'carol',
        { ...retry, arguments: { id: '602' } },
        'foreign-arguments',
        '601',
      );
      // The rightful retry still works: the refusals used nothing up.
      const { response } = await rawToolCall('carol', 3, retry);
      expect(response.result.structuredContent).toMatchObject({ receivedId: '601' });
    }, 30_000);

    it('refuses a replayed state', async () => {
      const { retry } = await heldCall('701');
      const first = await rawToolCall('carol', 2, retry);
      expect(first.response.result.structuredContent).toMatchObject({ receivedId: '701' });
      const before = raw.requests.length;
      const replay = await rawToolCall('carol', 3, retry);
      expect(replay.status).toBe(400);
      expect(replay.response.error.data).toEqual({ reason: 'replayed' });
      expect(raw.requests.length).toBe(before);
      expect(answersFor('701')).toHaveLength(1);
    }, 30_000);

    it('cancels a call the client never resumes at the TTL, and refuses its state as expired', async () => {
      const { retry } = await heldCall('801');
      const backendCall = raw.requests.filter(r => r.method === 'tools/call').at(-1)!;
      const events = () => raw.callEvents.filter(e => e.requestId === backendCall.id);
      await waitFor(
        () => events().length === 2,
        ELICITATION_TTL_MS + 10_000,
        'the held call to be cancelled and closed at the backend',
      );
      // To a 2025-era backend: notifications/cancelled first, then the stream closes.
      expect(events().map(e => e.type)).toEqual(['cancelled', 'stream-closed']);
      await expectRefused('carol', retry, 'expired', '801');
    }, 30_000);
  });
});
