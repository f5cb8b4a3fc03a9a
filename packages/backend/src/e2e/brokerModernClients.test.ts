/*
 * MCP 2026-07-28 (stateless) clients of the broker end to end (spec §9): the official SDK v2
 * client pinned to 2026-07-28 against the real backend process with the real RBAC plugin (the
 * development fixture's policies), towards today's (2025-11-25) backends: the example MCP
 * server, server-everything and the raw test backend (which records what reaches it). Raw HTTP
 * where the SDK hides what is checked (statuses, refusals, headers).
 */
import type { Client } from '@modelcontextprotocol/client';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import {
  EverythingServer,
  RawMcpBackend,
  startEverythingServer,
  startRawMcpBackend,
} from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { developmentRbac, type DevelopmentRbac } from './__testUtils__/developmentRbac';
import { BrokerClient, connectBrokerClient, toolCallAuditLines, waitFor } from './brokerTestKit';
import {
  connectModernClient,
  modernBody,
  MODERN_PROTOCOL_VERSION,
} from './__testUtils__/modernBrokerClient';

const LIST_TTL_MS = 42_000;

describe('MCP broker for 2026-07-28 clients (real backend process, SDK v2 client)', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let everything: EverythingServer;
  let raw: RawMcpBackend;
  let rbac: DevelopmentRbac | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  const tokens: Record<string, string> = {};

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;

  async function modernClient(user: string, capabilities: Record<string, unknown> = {}) {
    const client = await connectModernClient(backend.baseUrl, tokens[user], capabilities);
    closers.push(() => client.close().catch(() => undefined));
    return client;
  }

  async function legacyClient(user: string): Promise<BrokerClient> {
    const client = await connectBrokerClient(backend.baseUrl, tokens[user]);
    closers.push(() => client.close());
    return client;
  }

  /** POSTs `body` with the given headers (the modern ones unless replaced). */
  function post(
    user: string,
    body: unknown,
    headers: Record<string, string | undefined> = {},
  ): Promise<Response> {
    const method = (body as { method?: string }).method ?? '';
    const all: Record<string, string | undefined> = {
      authorization: `Bearer ${tokens[user]}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      'mcp-method': method,
      ...headers,
    };
    return fetch(mcpUrl(), {
      method: 'POST',
      headers: Object.fromEntries(
        Object.entries(all).filter((entry): entry is [string, string] => entry[1] !== undefined),
      ),
      body: JSON.stringify(body),
    });
  }

  beforeAll(async () => {
    rbac = developmentRbac('broker-modern-');
    [example, everything, raw] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      startEverythingServer(),
      startRawMcpBackend(),
    ]);
    backend = await startBackendProcess({
      config: {
        permission: rbac.permission,
        mcpBroker: {
          servers: [
            { name: 'example', url: example.url },
            { name: 'everything', url: everything.url },
            { name: 'raw', url: raw.url },
          ],
          listTtl: { seconds: LIST_TTL_MS / 1000 },
        },
      },
      // Info level: the auditor's tool-call events are printed.
      env: { LOG_LEVEL: 'info' },
    });
    for (const user of ['alice', 'carol', 'erin']) tokens[user] = await backend.signIn(user);
    const carol = await modernClient('carol');
    await waitFor(
      async () => {
        const names = (await carol.listTools()).tools.map(tool => tool.name);
        return ['example_add_tool', 'everything_echo', 'raw_hold'].every(n => names.includes(n));
      },
      30_000,
      'every backend to be listed',
    );
  }, 120_000);

  afterAll(async () => {
    for (const close of closers) await close();
    await backend?.stop();
    await Promise.all([example?.close(), everything?.kill(), raw?.close()]);
    rbac?.remove();
  }, 30_000);

  it('negotiates 2026-07-28 through server/discover: both eras, capabilities, serverInfo', async () => {
    const client = await modernClient('alice');
    expect(client.getNegotiatedProtocolVersion()).toBe(MODERN_PROTOCOL_VERSION);
    expect(client.getServerVersion()?.name).toBe('backstage-mcp-broker');
    const discovered = await client.discover();
    expect(discovered.supportedVersions).toEqual(
      expect.arrayContaining([MODERN_PROTOCOL_VERSION, '2025-11-25']),
    );
    expect(discovered.capabilities.tools).toBeDefined();
    expect(discovered.capabilities.completions).toBeDefined();
    expect(discovered.capabilities).not.toHaveProperty('tasks');
    expect(discovered).toMatchObject({ ttlMs: LIST_TTL_MS, cacheScope: 'public' });

    // Stateless: no session is minted.
    const response = await post('alice', modernBody(1, 'server/discover'));
    expect(response.status).toBe(200);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const body = await response.json();
    expect(body.result).toMatchObject({
      resultType: 'complete',
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'backstage-mcp-broker' } },
    });
  });

  it('lists what the principal may use, exactly as for a session, with ttlMs and private scope', async () => {
    const names = async (client: Client) => (await client.listTools()).tools.map(t => t.name);
    const [aliceModern, carolModern, aliceLegacy] = await Promise.all([
      modernClient('alice'),
      modernClient('carol'),
      legacyClient('alice'),
    ]);
    const alice = await names(aliceModern);
    expect(alice).toEqual(expect.arrayContaining(['example_echo', 'example_count']));
    expect(alice).not.toContain('example_add_tool');
    expect(alice).not.toContain('raw_hold');
    expect(await names(carolModern)).toEqual(
      expect.arrayContaining(['example_add_tool', 'raw_hold']),
    );
    const legacy = (await aliceLegacy.client.listTools()).tools.map(t => t.name);
    expect([...alice].sort()).toEqual([...legacy].sort());

    for (const method of ['tools/list', 'prompts/list', 'resources/list']) {
      const response = await post('alice', modernBody(2, method));
      expect(response.status).toBe(200);
      expect((await response.json()).result).toMatchObject({
        resultType: 'complete',
        ttlMs: LIST_TTL_MS,
        cacheScope: 'private',
      });
    }
  });

  it('calls a tool with progress and answers a complete result; the call is audited', async () => {
    const client = await modernClient('alice');
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'example_count', arguments: { steps: 3, delayMs: 10 } },
      { onprogress: update => progress.push(update.progress) },
    );
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
    expect(progress).toEqual([1, 2, 3]);
    await waitFor(
      () =>
        toolCallAuditLines(backend.output()).some(
          line =>
            line.tool === 'count' &&
            line.principal === 'user:default/alice' &&
            line.status === 'succeeded',
        ),
      10_000,
      'the audit event',
    );
  });

  it('refuses a denied tool exactly like an unknown one', async () => {
    const client = await modernClient('alice');
    const denied = await client
      .callTool({ name: 'example_add_tool', arguments: { name: 'x' } })
      .then(
        () => undefined,
        (error: { code?: number; message?: string }) => error,
      );
    const unknown = await client.callTool({ name: 'example_nothing', arguments: {} }).then(
      () => undefined,
      (error: { code?: number; message?: string }) => error,
    );
    expect(denied?.code).toBe(-32602);
    expect(unknown?.code).toBe(-32602);
    expect(denied?.message?.replace('example_add_tool', 'X')).toBe(
      unknown?.message?.replace('example_nothing', 'X'),
    );
  });

  it('cancels by closing the stream: the backend gets notifications/cancelled, then the close', async () => {
    const client = await modernClient('carol');
    const controller = new AbortController();
    const calls = raw.requests.filter(r => r.method === 'tools/call').length;
    const call = client.callTool(
      { name: 'raw_hold', arguments: {} },
      {
        signal: controller.signal,
        onprogress: () => controller.abort('user pressed stop'),
      },
    );
    await expect(call).rejects.toThrow();
    const backendCall = await waitFor(
      () => raw.requests.filter(r => r.method === 'tools/call')[calls],
      10_000,
      'the backend call',
    );
    const events = await waitFor(
      () => {
        const mine = raw.callEvents.filter(e => e.requestId === backendCall.id);
        return mine.length === 2 ? mine : undefined;
      },
      10_000,
      'the cancellation and the close at the backend',
    );
    expect(events!.map(e => e.type)).toEqual(['cancelled', 'stream-closed']);
    expect(raw.cancellations.find(c => c.requestId === backendCall.id)).toMatchObject({
      sessionId: backendCall.sessionId,
    });
  });

  it('ends a call with -32021 when the backend asks for a capability the client did not declare', async () => {
    // With the capability it becomes input_required (brokerInputRequired.test.ts).
    const client = await modernClient('carol');
    const cancelledBefore = raw.cancellations.length;
    await expect(
      client.callTool({ name: 'raw_elicit', arguments: { id: '17' } }),
    ).rejects.toMatchObject({ code: -32021 });
    await waitFor(
      () => raw.cancellations.length > cancelledBefore,
      10_000,
      'the backend call cancelled',
    );
  });

  it('shares backend sessions between stateless calls of one principal with equal capabilities only', async () => {
    const sessionOf = async (client: Client) => {
      const before = raw.requests.filter(r => r.method === 'tools/call').length;
      await client.callTool({ name: 'raw_progress', arguments: { steps: 1 } });
      return raw.requests.filter(r => r.method === 'tools/call')[before].sessionId;
    };
    const first = await sessionOf(await modernClient('carol'));
    const second = await sessionOf(await modernClient('carol'));
    const eliciting = await sessionOf(await modernClient('carol', { elicitation: {} }));
    expect(first).toBeDefined();
    expect(second).toBe(first);
    expect(eliciting).not.toBe(first);
    expect(raw.capabilitiesOf(eliciting!)).toMatchObject({ elicitation: {} });
    expect(raw.capabilitiesOf(first!)).not.toHaveProperty('elicitation');
  });

  it('gets prompts, reads resources and completes arguments over the broker', async () => {
    const client = await modernClient('alice');
    const prompt = await client.getPrompt({ name: 'example_greeting', arguments: { name: 'Ada' } });
    expect(prompt.messages[0].content).toEqual({ type: 'text', text: 'Hello, Ada!' });
    const resource = await client.readResource({ uri: 'example://readme' });
    expect(resource.contents[0]).toMatchObject({ uri: 'example://readme' });
    const completion = await client.complete({
      ref: { type: 'ref/prompt', name: 'everything_completable-prompt' },
      argument: { name: 'department', value: 'Eng' },
    });
    expect(completion.completion.values).toEqual(['Engineering']);

    const read = await post('alice', modernBody(3, 'resources/read', { uri: 'example://readme' }), {
      'mcp-name': 'example://readme',
    });
    expect((await read.json()).result).toMatchObject({
      resultType: 'complete',
      ttlMs: 0,
      cacheScope: 'private',
    });
  });

  it('refuses requests whose metadata is wrong, with the specification’s status and code', async () => {
    const mismatch = await post('alice', modernBody(4, 'tools/list'), {
      'mcp-method': 'prompts/list',
    });
    expect(mismatch.status).toBe(400);
    expect((await mismatch.json()).error).toMatchObject({ code: -32020 });

    const name = await post(
      'alice',
      modernBody(5, 'tools/call', { name: 'example_echo', arguments: { message: 'hi' } }),
      { 'mcp-name': 'example_count' },
    );
    expect(name.status).toBe(400);
    expect((await name.json()).error.code).toBe(-32020);

    const unsupported = modernBody(6, 'tools/list');
    unsupported.params._meta['io.modelcontextprotocol/protocolVersion'] = '2099-01-01';
    const version = await post('alice', unsupported, { 'mcp-protocol-version': '2099-01-01' });
    expect(version.status).toBe(400);
    const versionError = (await version.json()).error;
    expect(versionError.code).toBe(-32022);
    expect(versionError.data).toEqual({
      supported: expect.arrayContaining([MODERN_PROTOCOL_VERSION, '2025-11-25']),
      requested: '2099-01-01',
    });

    const missing = await post('alice', { jsonrpc: '2.0', id: 7, method: 'tools/list' });
    expect(missing.status).toBe(400);
    const missingError = (await missing.json()).error;
    expect(missingError.code).toBe(-32602);
    expect(missingError.message).toContain('io.modelcontextprotocol/clientCapabilities');

    const ping = await post('alice', modernBody(8, 'ping'));
    expect(ping.status).toBe(404);
    expect((await ping.json()).error.code).toBe(-32601);

    const get = await fetch(mcpUrl(), {
      headers: {
        authorization: `Bearer ${tokens.alice}`,
        accept: 'text/event-stream',
        'mcp-protocol-version': MODERN_PROTOCOL_VERSION,
      },
    });
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
  });

  it('needs mcp-broker.session.create for every stateless request (erin: 403)', async () => {
    const response = await post('erin', modernBody(9, 'tools/list'));
    expect(response.status).toBe(403);
    expect((await response.json()).error.message).toContain('mcp-broker.session.create');
  });
});
