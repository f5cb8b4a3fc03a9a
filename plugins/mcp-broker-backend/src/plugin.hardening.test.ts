/*
 * Hardening of the broker's client endpoint through the real plugin (startTestBackend, mocked
 * auth: a request without a token counts as a signed-in user) against the raw test backend, which
 * records exactly what reaches it: shutdown with calls in flight, deeply nested input, and bounded
 * sessions. Clients are the official SDK client or raw HTTP where the test is about bytes.
 */
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { Knex } from 'knex';
import { memorySqlite } from './testing/memorySqlite';
import type { JsonObject } from '@backstage/types';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';
import { initializeRequest } from './testing/initializeRequest';

type TestBackend = Awaited<ReturnType<typeof startTestBackend>>;

describe('mcpBrokerPlugin hardening (startTestBackend, mocked auth, raw test backend)', () => {
  let raw: RawMcpBackend;
  let backend: TestBackend | undefined;
  let endpoint: string;
  const clients: Client[] = [];

  beforeEach(async () => {
    raw = await startRawMcpBackend();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map(c => c.close().catch(() => undefined)));
    await backend?.stop().catch(() => undefined);
    backend = undefined;
    await raw.close();
  });

  async function startBroker(extra: JsonObject = {}, knex?: Knex) {
    backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        ...(knex ? [mockServices.database.factory({ knex })] : []),
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'raw', url: raw.url }],
              reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
              ...extra,
            },
          },
        }),
      ],
    });
    endpoint = `http://127.0.0.1:${(backend.server.address() as AddressInfo).port}/api/mcp-broker/mcp`;
  }

  async function connect(options: { onElicit?: () => Promise<Record<string, unknown>> } = {}) {
    const client = new Client(
      { name: 'hardening-test', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    if (options.onElicit) client.setRequestHandler(ElicitRequestSchema, options.onElicit as never);
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint)));
    clients.push(client);
    await waitFor(
      async () => (await client.listTools()).tools.some(t => t.name === 'raw_hold'),
      'the raw backend listed',
    );
    return client;
  }

  /** One JSON-RPC message POSTed as raw HTTP. */
  function post(body: unknown, headers: Record<string, string> = {}) {
    return fetch(endpoint, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  }

  const toolCallsReachingBackend = () => raw.requests.filter(r => r.method === 'tools/call');

  describe('shutdown with calls in flight', () => {
    it('refuses new requests with 503 while draining, and lets a call in flight finish with its result', async () => {
      await startBroker({ shutdownDrainTimeout: { seconds: 30 } });
      let answer!: () => void;
      const answered = new Promise<void>(resolve => (answer = resolve));
      let asked!: () => void;
      const elicited = new Promise<void>(resolve => (asked = resolve));
      const client = await connect({
        onElicit: async () => {
          asked();
          await answered;
          return { action: 'accept', content: { ok: true } };
        },
      });
      const call = client.callTool(
        { name: 'raw_elicit', arguments: { id: '"drain-1"' } },
        undefined,
        { timeout: 60_000 },
      );
      await elicited;
      const stopped = backend!.stop();
      const refused = await waitFor(async () => {
        const response = await post(initializeRequest({}, 'late'));
        return response.status === 503 ? response : undefined;
      }, 'the broker to refuse new requests');
      expect(refused!.headers.get('retry-after')).toBe('1');
      expect(await refused!.json()).toEqual({
        jsonrpc: '2.0',
        id: 'late',
        error: {
          code: -32000,
          message: expect.stringMatching(/shutting down; send the request again/),
        },
      });
      answer(); // the client's answer (a JSON-RPC response) still goes through while draining
      const result = await call;
      expect(result.structuredContent).toMatchObject({
        sentId: '"drain-1"',
        answer: { action: 'accept' },
      });
      await stopped;
      backend = undefined;
    }, 30_000);

    it('answers a call still running at the drain deadline with a retryable error, cancelling it at the backend before closing its stream', async () => {
      await startBroker({ shutdownDrainTimeout: { milliseconds: 200 } });
      const client = await connect();
      // The client's own timeout is far away: the error must come from the broker.
      const call = client.callTool({ name: 'raw_hold', arguments: {} }, undefined, {
        timeout: 120_000,
      });
      const outcome = call.then(
        () => undefined,
        (error: unknown) => error,
      );
      await waitFor(() => toolCallsReachingBackend().length === 1, 'the call at the backend');
      const stopped = backend!.stop();
      const error = await outcome;
      expect(error).toBeInstanceOf(McpError);
      expect(error).toMatchObject({
        code: -32000,
        message: expect.stringMatching(/shutting down .*may be retried/),
        data: { backend: 'raw', reason: 'shutting-down', retryable: true },
      });
      await stopped;
      backend = undefined;
      const backendId = toolCallsReachingBackend()[0].id;
      await waitFor(
        () => raw.callEvents.length === 2,
        'the backend to see the cancellation and the close',
      );
      expect(raw.callEvents).toEqual([
        { type: 'cancelled', requestId: backendId },
        { type: 'stream-closed', requestId: backendId },
      ]);
    }, 30_000);
  });

  describe('deeply nested input', () => {
    const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;

    async function rawSession(): Promise<string> {
      const init = await post(initializeRequest());
      expect(init.status).toBe(200);
      return init.headers.get('mcp-session-id')!;
    }

    it('refuses arguments nested 10,000 levels deep as the client’s mistake; nothing reaches the backend', async () => {
      await startBroker();
      await connect();
      const sessionId = await rawSession();
      const body = `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"raw_progress","arguments":${nested(10_000)}}}`;
      const response = await post(body, { 'mcp-session-id': sessionId });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        jsonrpc: '2.0',
        id: 'deep',
        error: { code: -32602, message: 'params nested deeper than 64 levels' },
      });
      expect(toolCallsReachingBackend()).toHaveLength(0);
      // An answer to an elicitation nested as deep is refused the same way, naming its member.
      const answer = await post(`{"jsonrpc":"2.0","id":"raw:x","result":${nested(10_000)}}`, {
        'mcp-session-id': sessionId,
      });
      expect(answer.status).toBe(400);
      expect((await answer.json()).error).toEqual({
        code: -32600,
        message: 'result nested deeper than 64 levels',
      });
    });

    it('passes arguments nested 60 levels deep to the backend', async () => {
      await startBroker();
      await connect();
      const sessionId = await rawSession();
      const body = `{"jsonrpc":"2.0","id":"ok","method":"tools/call","params":{"name":"raw_progress","arguments":{"steps":1,"x":${nested(58)}}}}`;
      const response = await post(body, { 'mcp-session-id': sessionId });
      expect(response.status).toBe(200);
      expect(await response.text()).toContain('1 steps');
      expect(toolCallsReachingBackend()).toHaveLength(1);
    });
  });
  describe('bounded sessions', () => {
    const initialize = (params: Record<string, unknown> = {}) =>
      initializeRequest({ clientInfo: { name: 'c', version: '1' }, ...params });
    const as = (user: string) => ({
      authorization: mockCredentials.user.header(`user:default/${user}`),
    });

    /** Starts a session with raw HTTP; returns the response (a session id header when 200). */
    const open = (user = 'alice', params?: Record<string, unknown>) =>
      post(initialize(params), as(user));
    const sessionOf = async (user = 'alice') => {
      const response = await open(user);
      expect(response.status).toBe(200);
      return response.headers.get('mcp-session-id')!;
    };
    const ping = (user: string, sessionId: string) =>
      post(
        { jsonrpc: '2.0', id: 'p', method: 'ping' },
        { ...as(user), 'mcp-session-id': sessionId },
      );

    /** Opens the session's GET stream (the session is then not idle) until `close`. */
    const streams: AbortController[] = [];
    async function openStream(user: string, sessionId: string) {
      const controller = new AbortController();
      streams.push(controller);
      const response = await fetch(endpoint, {
        headers: { accept: 'text/event-stream', 'mcp-session-id': sessionId, ...as(user) },
        signal: controller.signal,
      });
      expect(response.status).toBe(200);
      return { close: () => controller.abort() };
    }
    afterEach(() => streams.splice(0).forEach(s => s.abort()));

    it('keeps only bounded fields of initialize: a 1 MiB clientInfo is stored in a few hundred bytes', async () => {
      const knex = memorySqlite();
      await startBroker(
        { sessionStore: 'database', credentialEncryptionKey: randomBytes(32).toString('base64') },
        knex,
      );
      const huge = 'x'.repeat(1024 * 1024);
      const response = await open('alice', {
        clientInfo: { name: huge, version: 'v'.repeat(300), extra: huge },
        capabilities: { elicitation: { form: {} }, experimental: { blob: 'z'.repeat(100_000) } },
      });
      expect(response.status).toBe(200);
      const [row] = await knex('mcp_broker_client_sessions').where(
        'id',
        response.headers.get('mcp-session-id'),
      );
      const stored = JSON.stringify(row);
      // Before: over 2 MiB (clientInfo and capabilities kept whole). Now bounded whatever was sent.
      expect(stored.length).toBeLessThan(1_024);
      expect(JSON.parse(row.client_info)).toEqual({
        name: 'x'.repeat(256),
        version: 'v'.repeat(256),
      });
      expect(JSON.parse(row.client_capabilities)).toEqual({ elicitation: { form: {} } });
      await backend!.stop();
      backend = undefined;
      await knex.destroy();
    });

    it('refuses malformed or oversized capabilities with -32602 naming them', async () => {
      await startBroker();
      const wrong = await open('alice', { capabilities: { elicitation: 'yes' } });
      expect(wrong.status).toBe(400);
      expect((await wrong.json()).error).toEqual({
        code: -32602,
        message: 'params.capabilities.elicitation must be an object',
      });
      const large = await open('alice', {
        capabilities: { sampling: { note: 'y'.repeat(5_000) } },
      });
      expect(large.status).toBe(400);
      expect((await large.json()).error.message).toMatch(
        /params\.capabilities .* at most 4096 are accepted/,
      );
    });

    it('caps sessions per principal: the oldest idle one makes room, and with none idle a 429 names the limit', async () => {
      await startBroker({ sessionLimits: { perPrincipal: 2 } });
      const first = await sessionOf();
      const second = await sessionOf();
      expect((await ping('alice', second)).status).toBe(200); // first is now the oldest idle one
      const third = await sessionOf();
      expect((await ping('alice', first)).status).toBe(404);
      expect((await ping('alice', second)).status).toBe(200);
      await openStream('alice', second);
      await openStream('alice', third);
      const refused = await open();
      expect(refused.status).toBe(429);
      expect(await refused.json()).toEqual({
        jsonrpc: '2.0',
        id: 1,
        error: {
          code: -32000,
          message: expect.stringMatching(
            /at most 2 at once \(mcpBroker\.sessionLimits\.perPrincipal\)/,
          ),
        },
      });
      expect((await open('bob')).status).toBe(200); // another principal is not affected
    });

    it('caps sessions per replica the same way, across principals', async () => {
      await startBroker({ sessionLimits: { perReplica: 2 } });
      const alice = await sessionOf('alice');
      const bob = await sessionOf('bob');
      const aliceStream = await openStream('alice', alice);
      await openStream('bob', bob);
      const refused = await open('carol');
      expect(refused.status).toBe(429);
      expect((await refused.json()).error.message).toMatch(
        /maximum of 2 sessions \(mcpBroker\.sessionLimits\.perReplica\)/,
      );
      aliceStream.close();
      await waitFor(
        async () => (await open('carol')).status === 200,
        'room once alice’s session is idle',
      );
      expect((await ping('alice', alice)).status).toBe(404);
      expect((await ping('bob', bob)).status).toBe(200);
    });
  });
});
