/*
 * Several replicas behind one address (broker spec §6, portal on one database): two real
 * backend processes on one PostgreSQL database (the same `backend.database` connection and
 * prefix), with `mcpBroker.sessionStore: database`. MCP clients go through a round-robin
 * forwarder without stickiness (the official SDK client) or address a replica directly (raw
 * HTTP, where a test must choose the replica). Backends: the example server, the raw test
 * backend, which records exactly which ids and answers reach it, and the modern (2026-07-28,
 * modern-only) example server.
 *
 * Runs only with PostgreSQL (BACKSTAGE_TEST_DATABASE_POSTGRES15_CONNECTION_STRING, as yarn test
 * sets it): an in-memory SQLite database cannot be shared by two processes.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
  ExampleMcpServer,
  ModernExampleMcpServer,
  startExampleMcpServer,
  startModernExampleMcpServer,
} from '@internal/example-mcp-server';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { BackendProcess } from '../testing/startBackendProcess';
import { RoundRobinForwarder, startRoundRobinForwarder } from '../testing/roundRobinForwarder';
import { portalCall, portalClient, uniqueName } from '../testing/portalHttp';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { eventStreamWatchingFetch, passMarker, waitFor } from './brokerTestKit';
import { modernToolCall, postModernRequest } from './__testUtils__/modernBrokerClient';
import { answerRoutingFetch, RoutedAnswer } from './__testUtils__/answerRouting';
import { mcpRawPost } from '../testing/mcpRawPost';
import { sseMessages } from '../testing/rawMcpSession';
import { PgClient } from '../testing/backendDatabases';
import {
  describeSkippedWithoutPostgres,
  replicaDatabase,
  startReplicas,
} from './__testUtils__/replicas';

const ELICITATION_TTL_MS = 3_000;
const SESSION_TTL_MS = 4_000;
const NS = 'toystore';
const TOYSTORE_ROUTE = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
} as const;
const PURPOSE = 'multi-replica tests (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);

if (postgres === undefined) {
  describeSkippedWithoutPostgres(PURPOSE);
} else {
  describe('two backend replicas on one PostgreSQL database', () => {
    let replicas: BackendProcess[] = [];
    let forwarder: RoundRobinForwarder;
    let example: ExampleMcpServer;
    let raw: RawMcpBackend;
    let modern: ModernExampleMcpServer;
    const tokens: Record<string, string> = {};
    const clients: Client[] = [];

    beforeAll(async () => {
      [example, raw, modern] = await Promise.all([
        startExampleMcpServer({ port: 0, bearerToken: 'example-secret' }),
        startRawMcpBackend(),
        startModernExampleMcpServer({ port: 0, legacy: 'reject', bearerToken: 'modern-secret' }),
      ]);
      const config = {
        mcpBroker: {
          sessionStore: 'database',
          // The replicas share the broker's keys, kept in the database sealed with this key.
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          servers: [
            {
              name: 'example',
              url: example.url,
              headers: { Authorization: 'Bearer example-secret' },
            },
            { name: 'raw', url: raw.url, headers: { Authorization: 'Bearer raw-secret' } },
            {
              name: 'example-modern',
              url: modern.url,
              headers: { Authorization: 'Bearer modern-secret' },
            },
          ],
          elicitationTtl: { milliseconds: ELICITATION_TTL_MS },
          sessionIdleTimeout: { milliseconds: SESSION_TTL_MS },
          toolCallTimeout: { seconds: 30 },
        },
      };
      replicas = await startReplicas(postgres, config);
      forwarder = await startRoundRobinForwarder(replicas.map(r => r.port));
      // Signing keys live in the shared auth database: a token from one replica works on both.
      // Carol (portal-admin) may use every broker tool; the broker tests here are about replicas,
      // not access (brokerPermissions.test.ts).
      for (const user of ['alice', 'bob', 'carol']) tokens[user] = await replicas[0].signIn(user);
      // Both replicas must have listed every backend before tools can be called on them.
      for (const replica of replicas) {
        const client = await connectDirect(replica);
        await waitFor(
          async () => {
            const names = (await client.listTools()).tools.map(t => t.name);
            return ['example_confirm', 'raw_elicit', 'example-modern_confirm'].every(n =>
              names.includes(n),
            );
          },
          20_000,
          'every backend listed',
        );
      }
    }, 120_000);

    afterAll(async () => {
      await Promise.all(clients.map(c => c.close().catch(() => undefined)));
      await forwarder?.close();
      await Promise.all(replicas.map(r => r.stop()));
      await Promise.all([example?.close(), raw?.close(), modern?.close()]);
      await postgres.cleanup();
    }, 60_000);

    async function connectVia(baseUrl: string, token = tokens.carol, base?: FetchLike) {
      const { fetch: watchingFetch, eventStreamOpen } = eventStreamWatchingFetch(base);
      const transport = new StreamableHTTPClientTransport(
        new URL(`${baseUrl}/api/mcp-broker/mcp`),
        {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
          fetch: watchingFetch,
        },
      );
      const client = new Client(
        { name: 'replicas-e2e', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      const notifications: string[] = [];
      client.fallbackNotificationHandler = async n => {
        notifications.push(n.method);
      };
      await client.connect(transport);
      clients.push(client);
      return { client, transport, notifications, eventStreamOpen };
    }
    async function connectDirect(replica: BackendProcess) {
      return (await connectVia(replica.baseUrl)).client;
    }
    const connectBalanced = () => connectVia(forwarder.baseUrl);

    /** POSTs one JSON-RPC message to a chosen replica, as a client without the SDK would. */
    function rawPost(
      replica: BackendProcess,
      sessionId: string | undefined,
      body: unknown,
      signal?: AbortSignal,
    ) {
      return mcpRawPost(`${replica.baseUrl}/api/mcp-broker/mcp`, tokens.carol, body, {
        sessionId,
        protocolVersion: '2025-11-25',
        signal,
      });
    }

    /** Starts a session on a chosen replica with raw HTTP (no GET stream: it idles). */
    async function rawSession(replica: BackendProcess): Promise<string> {
      const init = await rawPost(replica, undefined, {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-11-25',
          capabilities: { elicitation: {} },
          clientInfo: { name: 'raw', version: '1' },
        },
      });
      expect(init.status).toBe(200);
      const sessionId = init.headers.get('mcp-session-id')!;
      await init.text();
      const initialized = await rawPost(replica, sessionId, {
        jsonrpc: '2.0',
        method: 'notifications/initialized',
      });
      expect(initialized.status).toBe(202);
      return sessionId;
    }

    /** Calls raw_elicit with raw HTTP on `replica` and returns the gateway id the client was shown. */
    async function startElicitingCall(
      replica: BackendProcess,
      sessionId: string,
      backendId: string,
    ) {
      const response = await rawPost(replica, sessionId, {
        jsonrpc: '2.0',
        id: `call-${backendId}`,
        method: 'tools/call',
        params: { name: 'raw_elicit', arguments: { id: JSON.stringify(backendId) } },
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const stream = sseMessages(response);
      const request = await waitFor(
        () => stream.messages.find(m => m.method === 'elicitation/create'),
        10_000,
        'elicitation/create on the call stream',
      );
      return { gatewayId: request!.id as string, stream };
    }

    const answersFor = (sentId: string) => raw.answers.filter(a => a.sentId === sentId);
    /** What reached the raw backend as cancellations of this call (its session, its own id). */
    const cancellationsOf = (call: { sessionId: string | undefined; id: string | undefined }) =>
      raw.cancellations.filter(c => c.sessionId === call.sessionId && c.requestId === call.id);

    it('recognises a session on both replicas and runs tools/call on each (round robin, SDK client)', async () => {
      const { client, transport } = await connectBalanced();
      const start = forwarder.log.length;
      for (let i = 1; i <= 4; i++) {
        const seen: number[] = [];
        const result = await client.callTool(
          { name: 'example_count', arguments: { steps: 2, delayMs: 10 } },
          undefined,
          {
            onprogress: p => seen.push(p.progress),
          },
        );
        expect(result.content).toEqual([{ type: 'text', text: 'counted to 2' }]);
        expect(seen).toEqual([1, 2]);
      }
      const calls = forwarder.log.slice(start).filter(r => r.body.includes('"tools/call"'));
      expect(new Set(calls.map(c => c.replica))).toEqual(new Set([0, 1]));
      expect(transport.sessionId).toBeDefined();
    }, 60_000);

    it('answers an elicitation raised on one replica through the other; the backend gets its own id back', async () => {
      const { client } = await connectBalanced();
      const answer = {
        action: 'accept' as const,
        content: { confirmed: true, comment: 'answered on another replica' },
      };
      client.setRequestHandler(ElicitRequestSchema, async () => answer);
      const start = forwarder.log.length;
      const result = await client.callTool({ name: 'raw_elicit', arguments: { id: '7.5' } });
      expect(result.structuredContent).toMatchObject({
        sentId: '7.5',
        receivedId: '7.5',
        receivedType: 'float',
        answer,
      });
      const served = forwarder.log.slice(start);
      const call = served.find(r => r.body.includes('"tools/call"'))!;
      const answerPost = served.find(r => r.body.includes('"result"') && r.body.includes('"raw:'))!;
      expect(answerPost.replica).not.toBe(call.replica);

      // The example server's confirm round trip, too, through whichever replicas come next.
      const confirmed = await client.callTool({
        name: 'example_confirm',
        arguments: { question: 'Ship it?' },
      });
      expect(confirmed.structuredContent).toEqual(answer);
    }, 60_000);

    /** A 2026-07-28 `tools/call` (raw HTTP) on a chosen replica, declaring elicitation. */
    const modernToolCallOn = (
      replica: BackendProcess,
      id: number,
      params: Record<string, unknown>,
    ) =>
      modernToolCall(replica.baseUrl, tokens.carol, id, params, {
        'io.modelcontextprotocol/clientCapabilities': { elicitation: {} },
        progressToken: `progress-${id}`,
      });

    it('resumes a 2026-07-28 client’s held call from the replica that does not hold it', async () => {
      const [a, b] = replicas;
      const args = { id: '9.25', alsoId: '"held-2"' };
      // The call starts on A, which holds the backend stream.
      const first = await modernToolCallOn(a, 1, { name: 'raw_elicit', arguments: args });
      expect(first.response.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { 'elicitation-1': expect.anything(), 'elicitation-2': expect.anything() },
      });
      // The retry lands on B with one answer: B answers the backend session itself (original
      // id) and relays what A's held stream yields next — the other request, asked again.
      const second = await modernToolCallOn(b, 2, {
        name: 'raw_elicit',
        arguments: args,
        requestState: first.response.result.requestState,
        inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
      });
      expect(second.response.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { 'elicitation-2': expect.anything() },
      });
      expect(answersFor('9.25')).toEqual([
        expect.objectContaining({ receivedId: '9.25', receivedType: 'float' }),
      ]);
      // A replay of the first state is refused on either replica; nothing reaches the backend.
      const requestsBefore = raw.requests.length;
      for (const replica of [a, b]) {
        const replay = await modernToolCallOn(replica, 3, {
          name: 'raw_elicit',
          arguments: args,
          requestState: first.response.result.requestState,
          inputResponses: { 'elicitation-1': { action: 'decline' } },
        });
        expect(replay.status).toBe(400);
        expect(replay.response.error.data).toEqual({ reason: 'replayed' });
      }
      expect(raw.requests.length).toBe(requestsBefore);
      // The last retry lands on B again and gets the final result through the relayed round's signals.
      const last = await modernToolCallOn(b, 4, {
        name: 'raw_elicit',
        arguments: args,
        requestState: second.response.result.requestState,
        inputResponses: { 'elicitation-2': { action: 'decline' } },
      });
      expect(last.response.result).toMatchObject({
        resultType: 'complete',
        structuredContent: {
          receivedId: '9.25',
          also: { receivedId: '"held-2"', receivedType: 'string', body: { action: 'decline' } },
        },
      });
      expect(answersFor('"held-2"')).toHaveLength(1);
    }, 60_000);

    it('cancels a call held on A at the backend when the client of its retry on B goes away', async () => {
      const [a, b] = replicas;
      const args = { id: '"cancel-on-b"', thenWaitForCancel: true };
      const first = await modernToolCallOn(a, 21, { name: 'raw_elicit', arguments: args });
      expect(first.response.result).toMatchObject({
        resultType: 'input_required',
        inputRequests: { 'elicitation-1': expect.anything() },
      });
      const toolCall = raw.requests.find(
        r => r.method === 'tools/call' && r.text.includes('cancel-on-b'),
      )!;
      const retry = {
        name: 'raw_elicit',
        arguments: args,
        requestState: first.response.result.requestState,
        inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
      };
      // The retry lands on B; the backend, answered, reports progress and then works on.
      const progressToken = 'progress-cancel-on-b';
      const client = new AbortController();
      const response = await postModernRequest(b.baseUrl, tokens.carol, 22, 'tools/call', retry, {
        meta: { 'io.modelcontextprotocol/clientCapabilities': { elicitation: {} }, progressToken },
        signal: client.signal,
      });
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const stream = sseMessages(response);
      await waitFor(
        () => stream.messages.some(m => m.method === 'notifications/progress'),
        10_000,
        'the backend’s progress, relayed from A by B',
      );
      const [callId] = await claimedHeldCalls(progressToken);
      expect(callId).toBeDefined();
      // The client closes its request: for a 2026-07-28 client, that is the cancellation.
      client.abort('the user pressed stop');
      await stream.done;
      await waitFor(
        () => cancellationsOf(toolCall).length > 0,
        10_000,
        'A to cancel the held call at the backend, with the backend’s id',
      );
      await waitFor(async () => (await rowsOfHeldCall(callId)) === 0, 10_000, 'its rows to go');
      expect(answersFor('"cancel-on-b"')).toHaveLength(1);
      // The state was used: a later retry is refused on either replica; nothing reaches the backend.
      const requestsBefore = raw.requests.length;
      for (const replica of [a, b]) {
        const replay = await modernToolCallOn(replica, 23, retry);
        expect(replay.status).toBe(400);
        expect(replay.response.error.data).toEqual({ reason: 'replayed' });
      }
      expect(raw.requests.length).toBe(requestsBefore);
    }, 60_000);

    it('relays a legacy client’s notifications/cancelled POSTed to B to its call running on A', async () => {
      const [a, b] = replicas;
      // The SDK client's own POSTs of tools/call: their ids, and whether their streams ended.
      const callIds: unknown[] = [];
      const streamsEnded = new Set<unknown>();
      const recordingFetch: FetchLike = async (url, init) => {
        const response = await fetch(url, init);
        const sent = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
        if (sent?.method !== 'tools/call' || response.body === null) return response;
        callIds.push(sent.id);
        const body = response.body.pipeThrough(
          new TransformStream({ flush: () => void streamsEnded.add(sent.id) }),
        );
        return new Response(body, { status: response.status, headers: response.headers });
      };
      const { client, transport } = await connectVia(a.baseUrl, tokens.carol, recordingFetch);
      const requestsBefore = raw.requests.length;
      let progressed = false;
      const call = client
        .callTool({ name: 'raw_wait_for_cancel', arguments: {} }, undefined, {
          onprogress: () => {
            progressed = true;
          },
        })
        .catch((error: unknown) => error);
      await waitFor(() => progressed, 10_000, 'the call running at the backend (its progress)');
      const toolCall = raw.requests
        .slice(requestsBefore)
        .find(r => r.method === 'tools/call' && r.text.includes('wait_for_cancel'))!;
      expect(callIds).toHaveLength(1);

      const cancelled = await rawPost(b, transport.sessionId, {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: callIds[0], reason: 'the user pressed stop on B' },
      });
      expect(cancelled.status).toBe(202);
      await waitFor(
        () => cancellationsOf(toolCall).length > 0,
        10_000,
        'A to cancel the call at the backend, with the backend’s id',
      );
      expect(cancellationsOf(toolCall)).toEqual([
        expect.objectContaining({ reason: 'the user pressed stop on B' }),
      ]);
      // A ends the client's call stream without a result, as for a cancellation POSTed to A.
      await waitFor(() => streamsEnded.has(callIds[0]), 10_000, 'the call’s stream on A to end');
      await waitFor(
        async () =>
          (
            await brokerQuery(
              "SELECT seq FROM mcp_broker_signals WHERE address = $1 AND kind = 'cancel'",
              [`session:${transport.sessionId}`],
            )
          ).length === 0,
        10_000,
        'the relayed cancellation’s row to go',
      );
      await client.close();
      expect(await call).toBeInstanceOf(Error);
    }, 60_000);

    it('lets exactly one of two simultaneous answers on two replicas through; the other is 404', async () => {
      const [a, b] = replicas;
      const sessionId = await rawSession(a);
      for (let round = 0; round < 4; round++) {
        const backendId = `double-${round}`;
        const { gatewayId, stream } = await startElicitingCall(
          round % 2 === 0 ? a : b,
          sessionId,
          backendId,
        );
        const answer = {
          jsonrpc: '2.0',
          id: gatewayId,
          result: { action: 'accept', content: { round } },
        };
        const responses = await Promise.all([
          rawPost(a, sessionId, answer),
          rawPost(b, sessionId, answer),
        ]);
        expect(responses.map(r => r.status).sort()).toEqual([202, 404]);
        const refused = responses.find(r => r.status === 404)!;
        expect(await refused.json()).toMatchObject({
          jsonrpc: '2.0',
          error: { message: expect.stringContaining('already answered') },
        });
        await stream.done;
        expect(stream.messages.at(-1)).toMatchObject({
          id: `call-${backendId}`,
          result: { structuredContent: { receivedId: `"${backendId}"` } },
        });
        expect(answersFor(`"${backendId}"`)).toHaveLength(1);
      }
    }, 60_000);

    it('gives a GET stream on either replica every list change exactly once', async () => {
      const [a, b] = replicas;
      const first = await connectVia(a.baseUrl);
      const second = await connectVia(b.baseUrl);
      // The SDK opens the GET stream after connect() resolves: wait until both are open.
      await Promise.all([first.eventStreamOpen, second.eventStreamOpen]);
      const name = `replica_tool_${Date.now().toString(36)}`;
      await first.client.callTool({ name: 'example_add_tool', arguments: { name } });
      await waitFor(
        () => first.notifications.includes('notifications/tools/list_changed'),
        5_000,
        'stream on A notified',
      );
      await waitFor(
        () => second.notifications.includes('notifications/tools/list_changed'),
        5_000,
        'stream on B notified',
      );
      // Each replica has its own event stream to the example server: the marker (its
      // prompts/list_changed) reaches each client through its replica, behind the tools change.
      await passMarker([first, second], async () => {
        await waitFor(
          () => example.openEventStreams() === 2,
          10_000,
          'both replicas’ event streams to example',
        );
        example.announcePromptsChanged();
      });
      const count = (list: string[]) =>
        list.filter(n => n === 'notifications/tools/list_changed').length;
      expect([count(first.notifications), count(second.notifications)]).toEqual([1, 1]);
      // And the new tool can be called through the other replica.
      const called = await second.client.callTool({
        name: `example_${name}`,
        arguments: { text: 'hi' },
      });
      expect(called.content).toEqual([{ type: 'text', text: `${name}: hi` }]);
    }, 60_000);

    /** Opens a session's GET stream on a chosen replica with raw HTTP; abort the controller to end it. */
    async function rawGet(replica: BackendProcess, sessionId: string) {
      const controller = new AbortController();
      const response = await fetch(`${replica.baseUrl}/api/mcp-broker/mcp`, {
        headers: {
          Authorization: `Bearer ${tokens.carol}`,
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
        },
        signal: controller.signal,
      });
      if (response.status !== 200) await response.text();
      return { status: response.status, response, close: () => controller.abort() };
    }

    it('refuses a second GET stream of a session with 409 on both replicas until the first one ends', async () => {
      const [a, b] = replicas;
      const sessionId = await rawSession(a);
      const first = await rawGet(a, sessionId);
      expect(first.status).toBe(200);
      for (const replica of [b, a, b]) {
        const second = await rawGet(replica, sessionId);
        expect(second.status).toBe(409);
      }
      first.close();
      // Released when the stream ends (the replica notices the close, then clears the lease).
      const onB = await waitFor(
        async () => {
          const attempt = await rawGet(b, sessionId);
          return attempt.status === 200 ? attempt : undefined;
        },
        5_000,
        'the stream lease released',
      );
      expect((await rawGet(a, sessionId)).status).toBe(409);
      onB!.close();
    }, 60_000);

    it('expires unused sessions and unanswered ids by TTL on every replica and removes their rows', async () => {
      const [a, b] = replicas;
      const idle = await rawSession(a);
      const busy = await rawSession(b);
      const { gatewayId, stream } = await startElicitingCall(b, busy, 'late');
      await stream.done; // the raising replica answers the backend -32001 at the TTL, the call ends
      expect(answersFor('"late"')).toEqual([
        expect.objectContaining({
          receivedId: '"late"',
          body: expect.objectContaining({ code: -32001 }),
        }),
      ]);
      const lateAnswer = await rawPost(a, busy, {
        jsonrpc: '2.0',
        id: gatewayId,
        result: { action: 'accept' },
      });
      expect(lateAnswer.status).toBe(404);
      expect(answersFor('"late"')).toHaveLength(1);

      // Expiry is the event: the sweeps remove the expired records (asking for the session would
      // keep it alive), then neither replica knows it.
      await waitFor(
        async () => {
          const left = await brokerRows(idle, gatewayId);
          return left.sessions === 0 && left.elicitations === 0;
        },
        SESSION_TTL_MS * 3,
        'the sweeps to remove the expired session and id',
      );
      for (const replica of [a, b]) {
        const response = await rawPost(replica, idle, {
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/list',
        });
        expect(response.status).toBe(404);
      }
      // The sweeps removed the records: nothing grows without bound.
      const rows = await brokerRows(idle, gatewayId);
      expect(rows).toEqual({ sessions: 0, elicitations: 0 });
    }, 60_000);

    it('two portal replicas: one approval wins across replicas, and the secret is revealed once', async () => {
      const [a, b] = replicas;
      const call = (
        replica: BackendProcess,
        user: string,
        method: string,
        path: string,
        body?: unknown,
      ) => portalCall(replica, method, path, { token: tokens[user], body });
      const product = await portalClient(a, tokens.bob).createApiProduct({
        metadata: {
          namespace: NS,
          name: uniqueName('replicas'),
          annotations: { 'backstage.io/owner': 'group:default/payments-team' },
        },
        spec: {
          displayName: 'Replicas',
          targetRef: TOYSTORE_ROUTE,
          approvalMode: 'manual',
          publishStatus: 'Published',
        },
      });
      for (let round = 0; round < 3; round++) {
        // Requested on one replica, raced on both.
        const key = await portalClient(b, tokens.alice).createRequest({
          apiProductRef: { namespace: NS, name: product.metadata.name },
          planTier: 'gold',
        });
        const approvals = await Promise.all(
          [a, b, a, b].map(replica =>
            call(replica, 'bob', 'POST', `/requests/${NS}/${key.metadata.name}/approve`, {}),
          ),
        );
        expect(approvals.map(r => r.status).sort()).toEqual([200, 409, 409, 409]);
        const reveals = await Promise.all(
          [a, b, a, b, a, b].map(replica =>
            call(replica, 'alice', 'GET', `/apikeys/${NS}/${key.metadata.name}/secret`),
          ),
        );
        expect(reveals.map(r => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
      }
    }, 60_000);

    it('two portal replicas: a list page token from one replica continues on the other', async () => {
      const [a, b] = replicas;
      const names: string[] = [];
      for (let i = 0; i < 3; i++) {
        const product = await portalClient(a, tokens.bob).createApiProduct({
          metadata: {
            namespace: NS,
            name: uniqueName('pages'),
            annotations: { 'backstage.io/owner': 'group:default/payments-team' },
          },
          spec: { displayName: 'Pages', targetRef: TOYSTORE_ROUTE, publishStatus: 'Published' },
        });
        names.push(product.metadata.name);
      }
      // No portal.pagination.tokenSecret configured: the key comes from the shared database.
      const walked: string[] = [];
      let token: string | undefined;
      let page = 0;
      do {
        const replica = page % 2 === 0 ? a : b;
        const query = `namespace=${NS}&limit=1${token === undefined ? '' : `&continue=${encodeURIComponent(token)}`}`;
        const response = await portalCall(replica, 'GET', `/apiproducts?${query}`, {
          token: tokens.alice,
        });
        expect(response.status).toBe(200);
        walked.push(
          ...response.body.items.map((p: { metadata: { name: string } }) => p.metadata.name),
        );
        token = response.body.metadata.continue;
        page += 1;
      } while (token !== undefined);
      expect(new Set(walked).size).toBe(walked.length);
      expect(walked).toEqual(expect.arrayContaining(names));
    }, 60_000);

    /** Rows of the shared held-call tables left for a backend's calls (its rounds, its signals). */
    async function heldCallRows(backend: string) {
      const rounds = await brokerQuery<{ call_id: string }>(
        'SELECT call_id FROM mcp_broker_held_calls WHERE backend = $1',
        [backend],
      );
      const ids = rounds.map(r => r.call_id);
      const messages = await brokerQuery(
        `SELECT 1 FROM mcp_broker_signals, unnest($1::text[]) AS ids(call_id)
         WHERE address = 'call:' || call_id OR address LIKE 'relay:' || call_id || ':%'`,
        [ids],
      );
      return { rounds: ids.length, messages: messages.length };
    }

    it('resumes a legacy client’s call to a 2026-07-28 backend with the answer it POSTs to the other replica', async () => {
      const [a, b] = replicas;
      const answers: RoutedAnswer[] = [];
      const transport = new StreamableHTTPClientTransport(
        new URL(`${a.baseUrl}/api/mcp-broker/mcp`),
        {
          requestInit: { headers: { Authorization: `Bearer ${tokens.carol}` } },
          fetch: answerRoutingFetch(a.baseUrl, b.baseUrl, answers),
        },
      );
      const client = new Client(
        { name: 'replicas-e2e-split', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      const asked: unknown[] = [];
      client.setRequestHandler(ElicitRequestSchema, async request => {
        asked.push(request.params);
        return { action: 'accept', content: { confirmed: true } };
      });
      await client.connect(transport);
      clients.push(client);

      // A holds the call (and asks on its stream); the answer goes to B, which hands it over.
      const result = await client.callTool({
        name: 'example-modern_confirm',
        arguments: { message: 'Ship it from B?' },
      });
      expect(asked).toEqual([expect.objectContaining({ message: 'Ship it from B?' })]);
      expect(result.content).toEqual([{ type: 'text', text: 'confirmed: true' }]);
      // The answer's 202 from B may arrive after the call's result from A.
      await waitFor(() => answers.length > 0, 10_000, 'the answer’s response');
      expect(answers).toEqual([
        {
          body: expect.objectContaining({ id: expect.stringMatching(/^example-modern:/) }),
          baseUrl: b.baseUrl,
          status: 202,
        },
      ]);
      // The same answer again, on either replica: the id was used once.
      for (const replica of [b, a]) {
        const again = await rawPost(replica, transport.sessionId, answers[0].body);
        expect(again.status).toBe(404);
        expect(await again.json()).toMatchObject({
          error: { message: expect.stringContaining('already answered') },
        });
      }
      // The call's published round and its signals were removed when it ended.
      await waitFor(
        async () => {
          const rows = await heldCallRows('example-modern');
          return rows.rounds === 0 && rows.messages === 0;
        },
        5_000,
        'the held-call rows of the ended call removed',
      );
    }, 60_000);

    it('lets one of two simultaneous answers to a 2026-07-28 backend’s input through, across replicas', async () => {
      const [a, b] = replicas;
      const sessionId = await rawSession(a);
      for (let round = 0; round < 4; round++) {
        // The call is held by each replica in turn; each answer races on both.
        const response = await rawPost(round % 2 === 0 ? a : b, sessionId, {
          jsonrpc: '2.0',
          id: `modern-call-${round}`,
          method: 'tools/call',
          params: { name: 'example-modern_confirm', arguments: { message: `Round ${round}?` } },
        });
        const stream = sseMessages(response);
        const request = await waitFor(
          () => stream.messages.find(m => m.method === 'elicitation/create'),
          10_000,
          'elicitation/create on the call stream',
        );
        const answer = {
          jsonrpc: '2.0',
          id: request!.id,
          result: { action: round < 2 ? 'accept' : 'decline', content: { confirmed: true } },
        };
        const responses = await Promise.all([
          rawPost(b, sessionId, answer),
          rawPost(a, sessionId, answer),
        ]);
        expect(responses.map(r => r.status).sort()).toEqual([202, 404]);
        await stream.done;
        expect(stream.messages.at(-1)).toMatchObject({
          id: `modern-call-${round}`,
          result: {
            content: [
              { type: 'text', text: round < 2 ? 'confirmed: true' : 'not confirmed (decline)' },
            ],
          },
        });
      }
    }, 60_000);

    // Kills a replica: keep it the last test that needs both.
    it('keeps a session going on the other replica when one is killed mid-call; new clients start cleanly', async () => {
      const { client } = await connectBalanced();
      const errors: string[] = [];
      client.onerror = error => errors.push(String(error));
      // What each replica holds besides calls — a session's GET stream and a 2026-07-28 call held
      // for its client's input — set up before the call below, which must still run at the kill.
      const holdings: Array<{
        streamSession: string;
        stream: Awaited<ReturnType<typeof rawGet>>;
        held: Awaited<ReturnType<typeof modernToolCallOn>>;
      }> = [];
      for (const [i, replica] of replicas.entries()) {
        const streamSession = await rawSession(replica);
        const stream = await rawGet(replica, streamSession);
        expect(stream.status).toBe(200);
        const held = await modernToolCallOn(replica, 41 + i, {
          name: 'raw_elicit',
          arguments: { id: `"killed-holder-${i}"` },
        });
        expect(held.response.result).toMatchObject({ resultType: 'input_required' });
        holdings.push({ streamSession, stream, held });
      }
      const start = forwarder.log.length;
      let streaming!: () => void;
      const firstProgress = new Promise<void>(resolve => (streaming = resolve));
      // The SDK ends a request whose stream broke only at the request's timeout.
      const slow = client.callTool(
        { name: 'example_count', arguments: { steps: 40, delayMs: 100 } },
        undefined,
        {
          timeout: 3_000,
          onprogress: () => streaming(),
        },
      );
      const settled = slow.then(
        () => 'resolved',
        () => 'rejected',
      );
      await firstProgress;
      const call = (await waitFor(
        () => forwarder.log.slice(start).find(r => r.body.includes('"tools/call"')),
        5_000,
        'the call forwarded',
      ))!;
      const doomed = replicas[call.replica];
      const survivor = replicas[1 - call.replica];
      const { streamSession, stream, held } = holdings[call.replica];
      // The session idles out after 4 s here: requests on the survivor keep it alive throughout.
      let pings = 100;
      const ping = async () => {
        const answer = await rawPost(survivor, streamSession, {
          jsonrpc: '2.0',
          id: (pings += 1),
          method: 'ping',
        });
        expect(answer.status).toBe(200);
        await answer.text();
      };
      await ping();
      await doomed.kill();
      const killedAt = Date.now();
      stream.close();
      // A retry sent at once (its requestState lives 3 s here) is claimed — the holder's presence
      // has not lapsed yet — and is answered with an error saying the call died with its replica
      // once it has, not left waiting for the 30 s tool call timeout.
      const lostRetry = modernToolCallOn(survivor, 43, {
        name: 'raw_elicit',
        arguments: { id: `"killed-holder-${call.replica}"` },
        requestState: held.response.result.requestState,
        inputResponses: { 'elicitation-1': { action: 'accept', content: { ok: true } } },
      });
      // The session's GET stream is taken over by the survivor once the dead replica's presence
      // lapsed (PRESENCE_TTL_MS, 10 s), long before its stream lease would have (30 s).
      const reopening = waitFor(
        async () => {
          await ping();
          const attempt = await rawGet(survivor, streamSession);
          expect([200, 409]).toContain(attempt.status);
          return attempt.status === 200 ? attempt : undefined;
        },
        25_000,
        'the GET stream reopened on the survivor',
      );
      // Awaited below, after the broken stream (kept from counting as unhandled meanwhile).
      reopening.catch(() => undefined);
      // The call's stream died with its replica at once (not at the count's end, 4 s later).
      await waitFor(
        () => errors.some(e => /SSE stream disconnected/.test(e)),
        2_000,
        'the broken stream reported',
      );
      expect(await settled).toBe('rejected');
      const reopened = await reopening;
      expect(Date.now() - killedAt).toBeLessThan(25_000);
      reopened!.close();
      holdings[1 - call.replica].stream.close();
      const lost = await lostRetry;
      expect(lost.response.error).toMatchObject({
        code: -32000,
        data: { backend: 'raw', reason: 'replica-lost', retryable: true },
      });
      expect(lost.response.error.message).toMatch(/replica .* stopped before the call ended/);
      // (A retry after the lapse is refused at once as `holder-gone`: src/store/heldCalls.test.ts;
      // here the requestState would have expired by then, elicitationTtl being 3 s.)

      // The same session, now served by the survivor (the forwarder skips the dead replica).
      const again = await client.callTool({
        name: 'example_count',
        arguments: { steps: 2, delayMs: 10 },
      });
      expect(again.content).toEqual([{ type: 'text', text: 'counted to 2' }]);
      // A client that starts over initialises cleanly on the survivor.
      const fresh = await connectBalanced();
      const echoed = await fresh.client.callTool({
        name: 'example_echo',
        arguments: { message: 'still here' },
      });
      expect(echoed.content).toEqual([{ type: 'text', text: 'still here' }]);
      replicas = [survivor, doomed];
    }, 60_000);

    /** Rows left in the broker's tables for a session and a gateway id (the sweep's effect). */
    /** Runs one query on the broker's database, which the replicas share. */
    async function brokerQuery<Row>(text: string, values: unknown[]): Promise<Row[]> {
      const connection = postgres!.config!.connection as Record<string, unknown>;
      const prefix = postgres!.config!.prefix as string;
      const pg = new PgClient({ ...connection, database: `${prefix}mcp-broker` });
      await pg.connect();
      try {
        return (await pg.query<Row>(text, values)).rows;
      } finally {
        await pg.end();
      }
    }

    async function brokerRows(sessionId: string, gatewayId: string) {
      const sessions = await brokerQuery('SELECT 1 FROM mcp_broker_client_sessions WHERE id = $1', [
        sessionId,
      ]);
      const elicitations = await brokerQuery(
        'SELECT 1 FROM mcp_broker_elicitations WHERE gateway_id = $1',
        [gatewayId],
      );
      return { sessions: sessions.length, elicitations: elicitations.length };
    }

    /** The ids of held calls claimed by a retry with `progressToken` (claims are JSON). */
    async function claimedHeldCalls(progressToken: string): Promise<string[]> {
      const rows = await brokerQuery<{ call_id: string }>(
        'SELECT call_id FROM mcp_broker_held_calls WHERE resumption LIKE $1',
        [`%${JSON.stringify(progressToken)}%`],
      );
      return rows.map(row => row.call_id);
    }

    /** Rows the held call `callId` has in the shared store (its round and its signals). */
    async function rowsOfHeldCall(callId: string): Promise<number> {
      const rows = await brokerQuery(
        `SELECT call_id FROM mcp_broker_held_calls WHERE call_id = $1
         UNION ALL SELECT address FROM mcp_broker_signals
         WHERE address = 'call:' || $1::text OR address LIKE 'relay:' || $1::text || ':%'`,
        [callId],
      );
      return rows.length;
    }
  });
}
