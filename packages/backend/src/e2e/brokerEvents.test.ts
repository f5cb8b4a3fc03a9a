/*
 * The MCP broker end to end: the real backend process (real sign-in), the official SDK client,
 * and real MCP servers — the repository's example server, server-everything as a child
 * process, and scripted servers for behaviour real ones cannot show on demand (malformed events,
 * forgotten sessions, no event stream).
 */
import http from 'node:http';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
// eslint-disable-next-line @backstage/no-forbidden-package-imports -- the broker's test-only server
import {
  ScriptedMcpServer,
  startScriptedMcpServer,
} from '@devportal/plugin-mcp-broker-backend/src/testing/scriptedMcpServer';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import {
  EverythingServer,
  startEverythingServer,
  startUnreachableServer,
  type UnreachableServer,
} from '@internal/test-mcp-backends';
import {
  BrokerBackendStatus,
  BrokerClient,
  BrokerStatus,
  brokerStatus,
  connectBrokerClient,
  passMarker,
  waitFor,
} from './brokerTestKit';
import { mcpRawPost } from '../testing/mcpRawPost';

const BROKER_SECRET = 'Bearer broker-own-credential-for-scripted';

describe('the MCP broker in the real backend process', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let everything: EverythingServer;
  let unreachableServer: UnreachableServer;
  let scripted: ScriptedMcpServer;
  let poller: ScriptedMcpServer;
  let carol: string;
  let bob: string;
  const clients: BrokerClient[] = [];

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;

  function status(): Promise<BrokerStatus> {
    return brokerStatus(backend.baseUrl, carol);
  }

  async function backendStatus(name: string): Promise<BrokerBackendStatus> {
    return (await status()).backends.find(b => b.name === name)!;
  }

  /** Connects an SDK client and waits until its GET stream is open at the broker. */
  async function connect(token = carol): Promise<BrokerClient> {
    const before = (await status()).clients.eventStreams;
    const client = await connectBrokerClient(backend.baseUrl, token);
    clients.push(client);
    await waitFor(
      async () => (await status()).clients.eventStreams > before,
      10_000,
      'the GET stream',
    );
    return client;
  }

  async function toolNames(client: BrokerClient): Promise<string[]> {
    return (await client.client.listTools()).tools.map(t => t.name);
  }

  const rawPost = (token: string, body: unknown, sessionId?: string) =>
    mcpRawPost(mcpUrl(), token, body, { sessionId: sessionId || undefined });

  async function rawInitialize(token: string): Promise<string> {
    const response = await rawPost(token, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'raw', version: '1' },
      },
    });
    expect(response.status).toBe(200);
    const body = await response.json();
    expect(body.result.protocolVersion).toBe('2025-06-18');
    return response.headers.get('mcp-session-id')!;
  }

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    everything = await startEverythingServer();
    scripted = await startScriptedMcpServer({
      tools: ['echo', 'scripted_only'],
      requiredAuthorization: BROKER_SECRET,
      // resources (an empty list): for the marker after a burst of events (passMarker).
      capabilities: { tools: { listChanged: true }, resources: { listChanged: true } },
    });
    poller = await startScriptedMcpServer({ tools: ['first'], noEventStream: true });
    unreachableServer = await startUnreachableServer();
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [
            { name: 'example', url: example.url },
            { name: 'everything', url: everything.url },
            // Same prefix as `example`: its `echo` clashes with example's and loses (config order).
            {
              name: 'scripted',
              url: scripted.url,
              toolPrefix: 'example_',
              headers: { Authorization: BROKER_SECRET },
            },
            { name: 'poller', url: poller.url },
            { name: 'unreachable', url: unreachableServer.url },
          ],
          reconnect: { initialDelay: { milliseconds: 100 }, maxDelay: { seconds: 1 } },
          pollInterval: { milliseconds: 300 },
          coalesceWindow: { milliseconds: 50 },
          keepAlive: { seconds: 1 },
        },
      },
    });
    // Carol (portal-admin) may use every tool and read the status: these tests are about
    // aggregation, events and sessions; access control is brokerPermissions.test.ts's subject.
    carol = await backend.signIn('carol');
    bob = await backend.signIn('bob');
    await waitFor(
      async () => {
        const s = await status();
        return ['example', 'everything', 'scripted', 'poller'].every(
          name => s.backends.find(b => b.name === name)?.state === 'connected',
        );
      },
      30_000,
      'the backends to connect',
    );
  }, 120_000);

  afterEach(async () => {
    await Promise.all(clients.splice(0).map(c => c.close()));
    // connect() counts open GET streams; a closed client's stream that the broker has not yet
    // seen go would be counted there and hide the new one (seen as before=1, now=1).
    await waitFor(
      async () => (await status()).clients.eventStreams === 0,
      5000,
      'closed clients’ streams to end',
    );
  });

  afterAll(async () => {
    await backend?.stop();
    await Promise.all([
      example?.close(),
      everything?.kill(),
      scripted?.close(),
      poller?.close(),
      unreachableServer?.close(),
    ]);
  }, 30_000);

  it('answers 401 without a Backstage token', async () => {
    const post = await fetch(mcpUrl(), {
      method: 'POST',
      body: '{}',
      headers: { 'Content-Type': 'application/json' },
    });
    expect(post.status).toBe(401);
    const statusResponse = await fetch(`${backend.baseUrl}/api/mcp-broker/status`);
    expect(statusResponse.status).toBe(401);
  });

  it('lists every backend’s tools with prefixes, resolves clashes by config order and reports them', async () => {
    const client = await connect();
    const { tools } = await client.client.listTools();
    const names = tools.map(t => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'example_echo',
        'example_count',
        'example_add_tool',
        'everything_echo',
        'example_scripted_only',
        'poller_first',
      ]),
    );
    expect(names.filter(n => n === 'example_echo')).toHaveLength(1);
    expect(tools.find(t => t.name === 'example_echo')!.description).toBe(
      'Returns the message it is given',
    );

    const { prompts } = await client.client.listPrompts();
    expect(prompts.map(p => p.name)).toContain('example_greeting');
    const { resources } = await client.client.listResources();
    expect(resources.map(r => r.uri)).toContain('example://readme');

    const s = await status();
    expect(s.clashes).toContainEqual({
      kind: 'tool',
      name: 'example_echo',
      owner: 'example',
      hidden: 'scripted',
    });
    const unreachable = s.backends.find(b => b.name === 'unreachable')!;
    expect(unreachable.state).toBe('backing-off');
    // It keeps retrying: a later status names a later retry (the broker's clock on both sides).
    await waitFor(
      async () =>
        Date.parse((await backendStatus('unreachable')).nextRetryAt!) >
        Date.parse(unreachable.nextRetryAt!),
      5000,
      'the unreachable backend’s next retry',
    );
    expect(s.backends.find(b => b.name === 'example')!.counts.tools).toBeGreaterThanOrEqual(5);
    expect(s.backends.find(b => b.name === 'poller')!.eventStream).toBe('polling');
    expect(JSON.stringify(s)).not.toContain('broker-own-credential');
  }, 30_000);

  it('routes tools/call, prompts/get and resources/read to the owning backend', async () => {
    const client = await connect();
    const echoed = await client.client.callTool({
      name: 'example_echo',
      arguments: { message: 'hi' },
    });
    expect(echoed.content).toEqual([{ type: 'text', text: 'hi' }]);
    const everythingEcho = await client.client.callTool({
      name: 'everything_echo',
      arguments: { message: 'hey' },
    });
    expect(JSON.stringify(everythingEcho.content)).toContain('hey');
    const scriptedOnly = await client.client.callTool({
      name: 'example_scripted_only',
      arguments: { message: 'x' },
    });
    expect(scriptedOnly.content).toEqual([{ type: 'text', text: 'scripted scripted_only: x' }]);

    const prompt = await client.client.getPrompt({
      name: 'example_greeting',
      arguments: { name: 'Ada' },
    });
    expect(prompt.messages[0].content).toEqual({ type: 'text', text: 'Hello, Ada!' });
    const readme = await client.client.readResource({ uri: 'example://readme' });
    expect(readme.contents[0]).toMatchObject({
      text: 'The example MCP server of this repository.',
    });
  }, 30_000);

  it('answers unknown names with -32602 and unsupported methods with -32601', async () => {
    const client = await connect();
    const code = async (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (error: unknown) => (error as McpError).code,
      );
    expect(await code(client.client.callTool({ name: 'nope_nothing', arguments: {} }))).toBe(
      -32602,
    );
    expect(await code(client.client.getPrompt({ name: 'nope' }))).toBe(-32602);
    expect(await code(client.client.readResource({ uri: 'nowhere://x' }))).toBe(-32602);
    expect(await code(client.client.setLoggingLevel('debug'))).toBe(-32601);
    expect(await code(client.client.subscribeResource({ uri: 'example://readme' }))).toBe(-32601);
    expect(await code(client.client.unsubscribeResource({ uri: 'example://readme' }))).toBe(-32601);
    // The session survives client mistakes.
    expect(await toolNames(client)).toContain('example_echo');
  }, 30_000);

  it('uses the broker’s own credentials towards a backend, never the client’s token', async () => {
    const seen = scripted.authorizationHeaders();
    expect(seen.length).toBeGreaterThan(0);
    expect(new Set(seen)).toEqual(new Set([BROKER_SECRET]));
  });

  it('fans tools/list_changed out to every open stream whose view it changes, but not to a client that connects later', async () => {
    const first = await connect();
    const second = await connect(bob);
    const third = await connect();
    await Promise.all([first, second, third].map(c => c.eventStreamOpen));
    await first.client.callTool({ name: 'example_add_tool', arguments: { name: 'fanout' } });
    await waitFor(
      () => [first, third].every(c => c.notifications.includes('notifications/tools/list_changed')),
      5000,
      'both of carol’s clients notified',
    );
    expect(await toolNames(first)).toContain('example_fanout');
    // Bob's mcp-user policy hides a tool without readOnlyHint: his view did not change, so he
    // is not told (the marker, which he may see, arrives behind anything sent before it).
    await passMarker([second], () => example.announcePromptsChanged());
    expect(second.notifications).not.toContain('notifications/tools/list_changed');
    expect(await toolNames(second)).not.toContain('example_fanout');

    const late = await connect();
    await passMarker([late], async () => {
      await waitFor(
        async () => (await backendStatus('example')).eventStream === 'open',
        5000,
        'the broker’s event stream to example',
      );
      example.announcePromptsChanged();
    });
    expect(late.notifications).toEqual(['notifications/prompts/list_changed']); // the marker only
    await first.client.callTool({ name: 'example_remove_tool', arguments: { name: 'fanout' } });
    await waitFor(
      async () => !(await toolNames(late)).includes('example_fanout'),
      5000,
      'tool removed',
    );
    await waitFor(
      () => late.notifications.includes('notifications/tools/list_changed'),
      5000,
      'late client notified',
    );
  }, 30_000);

  it('drops malformed backend events with a warning and forwards valid ones', async () => {
    const client = await connect();
    const droppedBefore = (await backendStatus('scripted')).droppedEvents;
    const malformed = [
      'data: not json\n\n',
      `data: ${JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'notifications/tools/list_changed' })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '1.0', method: 'notifications/tools/list_changed' })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: [1] })}\n\n`,
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed', params: { pad: 'x'.repeat(5000) } })}\n\n`,
      // prompts listChanged was not advertised by this backend
      `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/prompts/list_changed' })}\n\n`,
      `event: other\ndata: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' })}\n\n`,
    ];
    for (const frame of malformed) scripted.sendRaw(frame);
    await waitFor(
      async () =>
        (await backendStatus('scripted')).droppedEvents >= droppedBefore + malformed.length,
      5000,
      'drops',
    );
    expect(client.notifications).toEqual([]);

    // A valid event after the dropped ones: it is the only notification the client gets (one
    // the broker wrongly took from the dropped ones would have been forwarded before it).
    scripted.sendListChanged('tools');
    await waitFor(
      () => client.notifications.includes('notifications/tools/list_changed'),
      5000,
      'valid event forwarded',
    );
    expect(client.notifications).toEqual(['notifications/tools/list_changed']);
    expect((await backendStatus('scripted')).lastEventAt).toBeDefined();
  }, 30_000);

  it('coalesces a burst of backend events into few client notifications', async () => {
    const client = await connect();
    for (let i = 0; i < 200; i++) scripted.sendListChanged('tools');
    // The marker follows the burst on the same backend stream, so the broker has handled every
    // event of the burst when the client gets it (a coalesced one may still trail it).
    await passMarker(
      [client],
      () => scripted.sendListChanged('resources'),
      'notifications/resources/list_changed',
    );
    const toolsChanged = client.notifications.filter(
      m => m === 'notifications/tools/list_changed',
    ).length;
    expect(toolsChanged).toBeGreaterThanOrEqual(1);
    expect(toolsChanged).toBeLessThanOrEqual(5);
  }, 30_000);

  it('re-lists a backend without an event stream (GET 405) periodically and tells clients', async () => {
    const client = await connect();
    poller.tools = ['first', 'second'];
    await waitFor(
      () => client.notifications.includes('notifications/tools/list_changed'),
      5000,
      'poll noticed',
    );
    expect(await toolNames(client)).toContain('poller_second');
  }, 30_000);

  it('re-initializes a backend session that the backend forgot (404) and receives its events again', async () => {
    const client = await connect();
    const initializesBefore = scripted.initializeCount();
    scripted.forgetSessions();
    await waitFor(
      () => scripted.initializeCount() > initializesBefore && scripted.openEventStreams() === 1,
      10_000,
      're-initialize',
    );
    await waitFor(
      async () => (await backendStatus('scripted')).state === 'connected',
      5000,
      'connected',
    );
    // The view did not change, so clients were not bothered: the marker is all they get.
    await passMarker(
      [client],
      () => scripted.sendListChanged('resources'),
      'notifications/resources/list_changed',
    );
    expect(client.notifications).toEqual(['notifications/resources/list_changed']);
    scripted.sendListChanged('tools');
    await waitFor(
      () => client.notifications.includes('notifications/tools/list_changed'),
      5000,
      'event after re-init',
    );
  }, 30_000);

  it('reconnects to a backend that was killed and restarted, and its events flow again', async () => {
    const client = await connect();
    const port = example.port;
    const connectedBefore = (await backendStatus('example')).lastConnectedAt;
    await example.close();
    await waitFor(
      async () => (await backendStatus('example')).state !== 'connected',
      5000,
      'backend seen down',
    );
    // Tools stay listed while the backend restarts.
    expect(await toolNames(client)).toContain('example_echo');
    example = await startExampleMcpServer({ port });
    await waitFor(
      async () => {
        const s = await backendStatus('example');
        return s.state === 'connected' && s.lastConnectedAt !== connectedBefore;
      },
      10_000,
      'reconnected',
    );
    await client.client.callTool({
      name: 'example_add_tool',
      arguments: { name: 'after_restart' },
    });
    await waitFor(
      () => client.notifications.includes('notifications/tools/list_changed'),
      5000,
      'event after restart',
    );
    expect(await toolNames(client)).toContain('example_after_restart');

    const everythingConnected = (await backendStatus('everything')).lastConnectedAt;
    await everything.kill();
    await waitFor(
      async () => (await backendStatus('everything')).state !== 'connected',
      5000,
      'everything seen down',
    );
    everything = await startEverythingServer({ port: everything.port });
    await waitFor(
      async () => {
        const s = await backendStatus('everything');
        return s.state === 'connected' && s.lastConnectedAt !== everythingConnected;
      },
      15_000,
      'everything reconnected',
    );
    expect(await toolNames(client)).toContain('everything_echo');
  }, 60_000);

  it('binds a session to its principal, allows one GET stream and ends it on DELETE', async () => {
    const sessionId = await rawInitialize(carol);
    expect(Buffer.from(sessionId, 'base64url').length).toBeGreaterThanOrEqual(16);
    const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
    expect((await rawPost(carol, list, sessionId)).status).toBe(200);
    const asBob = await rawPost(bob, list, sessionId);
    expect(asBob.status).toBe(404);
    expect((await asBob.json()).error.code).toBe(-32001);

    const streamAbort = new AbortController();
    const get = () =>
      fetch(mcpUrl(), {
        headers: {
          Authorization: `Bearer ${carol}`,
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
        },
        signal: streamAbort.signal,
      });
    const firstGet = await get();
    expect(firstGet.status).toBe(200);
    expect(firstGet.headers.get('content-type')).toContain('text/event-stream');
    const secondGet = await get();
    expect(secondGet.status).toBe(409);
    expect((await secondGet.json()).error.message).toMatch(/already has an open GET stream/);

    const deleted = await fetch(mcpUrl(), {
      method: 'DELETE',
      headers: { Authorization: `Bearer ${carol}`, 'Mcp-Session-Id': sessionId },
    });
    expect(deleted.status).toBe(204);
    // The stream ends with the session.
    const reader = firstGet.body!.getReader();
    for (;;) {
      const { done } = await reader.read();
      if (done) break;
    }
    expect((await rawPost(carol, list, sessionId)).status).toBe(404);
    streamAbort.abort();
  }, 30_000);

  it('answers client mistakes with 4xx and a message saying what to fix', async () => {
    const noSession = await rawPost(carol, { jsonrpc: '2.0', id: 1, method: 'tools/list' });
    expect(noSession.status).toBe(400);
    expect((await noSession.json()).error.message).toMatch(/Mcp-Session-Id/);
    const notJson = await fetch(mcpUrl(), {
      method: 'POST',
      headers: { Authorization: `Bearer ${carol}`, 'Content-Type': 'application/json' },
      body: '{oops',
    });
    expect(notJson.status).toBe(400);
    expect((await notJson.json()).error.code).toBe(-32700);
    const batch = await rawPost(carol, [{ jsonrpc: '2.0', id: 1, method: 'ping' }]);
    expect(batch.status).toBe(400);
  });

  it('keeps notifying other clients while one client stops reading its stream', async () => {
    const sessionId = await rawInitialize(carol);
    // A client that opens its GET stream and never reads from it.
    const url = new URL(mcpUrl());
    const stalled = http.request({
      host: '127.0.0.1',
      port: url.port,
      path: url.pathname,
      headers: {
        Authorization: `Bearer ${carol}`,
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        Host: url.host,
      },
    });
    stalled.on('response', response => response.pause());
    stalled.on('error', () => {});
    stalled.end();
    const reader = await connect();
    for (let i = 0; i < 5; i++) {
      reader.notifications.length = 0;
      await reader.client.callTool({ name: 'example_add_tool', arguments: { name: `stall${i}` } });
      await waitFor(
        () => reader.notifications.includes('notifications/tools/list_changed'),
        3000,
        `notification ${i}`,
      );
    }
    stalled.destroy();
  }, 30_000);

  it('refuses foreign Origin and Host headers (DNS rebinding protection)', async () => {
    const foreignOrigin = await fetch(mcpUrl(), {
      method: 'POST',
      headers: {
        Authorization: `Bearer ${carol}`,
        'Content-Type': 'application/json',
        Origin: 'http://evil.example',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(foreignOrigin.status).toBe(403);
    expect((await foreignOrigin.json()).error.message).toMatch(/allowedOrigins/);

    const url = new URL(mcpUrl());
    const foreignHost = await new Promise<number>((resolve, reject) => {
      const request = http.request(
        {
          host: '127.0.0.1',
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: {
            Host: `evil.example:${url.port}`,
            Authorization: `Bearer ${carol}`,
            'Content-Type': 'application/json',
          },
        },
        response => {
          response.resume();
          resolve(response.statusCode!);
        },
      );
      request.on('error', reject);
      request.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }));
    });
    expect(foreignHost).toBe(403);
  });
});
