/*
 * Curated endpoints (spec §13, docs/contracts/curated-endpoints.md) end to end on the development
 * backend with the real RBAC plugin and the development policies: the example MCP server and
 * server-everything behind the broker, and two endpoints —
 *   `ops`:   the example server's tools but `remove_tool`, with `echo`'s description overridden;
 *   `reads`: server-everything's read-only tools (annotation filter), plus the example's `echo`.
 * Official SDK clients of both eras (v1 sessions, v2 pinned to 2026-07-28) list and call through
 * them; carol (portal-admin) may use every tool, alice (mcp-user) only read-only ones and the
 * example's echo/count/confirm, so her view through `ops` is narrower than carol's and never wider
 * than her policy. Raw HTTP where the SDK hides the status (404s).
 */
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { EverythingServer, startEverythingServer } from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { developmentRbac, type DevelopmentRbac } from './__testUtils__/developmentRbac';
import {
  BrokerClient,
  brokerStatus,
  connectBrokerClient,
  passMarker,
  toolCallAuditLines,
  waitFor,
} from './brokerTestKit';
import { connectModernClient } from './__testUtils__/modernBrokerClient';

const OPS_ECHO = 'Echo for on-call engineers: repeats the message.';
const OPS_INSTRUCTIONS = 'Operations tools of the example server; no removals.';
const endpointPath = (name: string) => `/api/mcp-broker/endpoints/${name}/mcp`;

type Named = { name: string; description?: string };
const namesOf = (tools: Named[]) => tools.map(tool => tool.name).sort();
const errorOf = (call: Promise<unknown>) =>
  call.then(
    () => undefined,
    (error: { code?: number; message?: string }) => error,
  );

describe('curated endpoints (spec §13): narrowed views of the broker in both eras (real backend, RBAC)', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let everything: EverythingServer;
  let rbac: DevelopmentRbac | undefined;
  const closers: Array<() => Promise<unknown>> = [];
  const tokens: Record<string, string> = {};

  async function legacy(user: string, endpoint?: string): Promise<BrokerClient> {
    const client = await connectBrokerClient(
      backend.baseUrl,
      tokens[user],
      endpoint === undefined ? undefined : endpointPath(endpoint),
    );
    closers.push(() => client.close());
    return client;
  }

  async function modern(user: string, endpoint: string) {
    const client = await connectModernClient(
      backend.baseUrl,
      tokens[user],
      {},
      undefined,
      endpointPath(endpoint),
    );
    closers.push(() => client.close().catch(() => undefined));
    return client;
  }

  beforeAll(async () => {
    rbac = developmentRbac('broker-endpoints-');
    [example, everything] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      startEverythingServer(),
    ]);
    backend = await startBackendProcess({
      config: {
        permission: rbac.permission,
        mcpBroker: {
          servers: [
            { name: 'example', url: example.url },
            { name: 'everything', url: everything.url },
          ],
          // Every change goes out at once (passMarker counts what arrived).
          coalesceWindow: { milliseconds: 0 },
          endpoints: {
            ops: {
              title: 'Operations',
              instructions: OPS_INSTRUCTIONS,
              servers: ['example'],
              tools: { exclude: ['example_remove_tool'] },
              overrides: { example_echo: { description: OPS_ECHO } },
            },
            reads: {
              servers: ['everything', 'example', 'not-yet-there'],
              tools: { include: ['everything_*', 'example_echo'] },
              annotations: { readOnlyHint: true },
            },
          },
        },
      },
      // Info level: the auditor's tool-call events are printed.
      env: { LOG_LEVEL: 'info' },
      startTimeoutMs: 240_000,
    });
    for (const user of ['alice', 'carol']) tokens[user] = await backend.signIn(user);
    await waitFor(
      async () =>
        (await brokerStatus(backend.baseUrl, tokens.carol)).backends.every(
          b => b.state === 'connected',
        ),
      60_000,
      'both servers connected',
    );
  }, 400_000);

  afterAll(async () => {
    for (const close of closers) await close();
    await backend?.stop();
    await Promise.all([example?.close(), everything?.kill()]);
    rbac?.remove();
  }, 30_000);

  it('names the endpoint with its instructions in initialize (2025-11-25 session)', async () => {
    const carol = await legacy('carol', 'ops');
    expect(carol.client.getServerVersion()).toMatchObject({
      name: 'backstage-mcp-broker/ops',
      title: 'Operations',
    });
    expect(carol.client.getInstructions()).toBe(OPS_INSTRUCTIONS);
    const main = await legacy('carol');
    expect(main.client.getServerVersion()?.name).toBe('backstage-mcp-broker');
  });

  it("lists only the endpoint's tools, with its overrides, and narrows each person's policy view", async () => {
    const carol = await legacy('carol', 'ops');
    const tools = (await carol.client.listTools()).tools as Named[];
    expect(namesOf(tools)).toEqual([
      'example_add_tool',
      'example_confirm',
      'example_count',
      'example_deploy',
      'example_echo',
    ]);
    expect(tools.find(tool => tool.name === 'example_echo')?.description).toBe(OPS_ECHO);
    // The main endpoint is unchanged: every tool, the backend's own description.
    const main = (await (await legacy('carol')).client.listTools()).tools as Named[];
    expect(namesOf(main)).toEqual(
      expect.arrayContaining(['everything_echo', 'example_remove_tool']),
    );
    expect(main.find(tool => tool.name === 'example_echo')?.description).not.toBe(OPS_ECHO);
    // alice may not use add_tool: the endpoint does not widen her policy.
    const alice = await legacy('alice', 'ops');
    expect(namesOf((await alice.client.listTools()).tools)).toEqual([
      'example_confirm',
      'example_count',
      'example_echo',
    ]);
  });

  it('filters by annotations and tool globs', async () => {
    const carol = await legacy('carol', 'reads');
    const names = namesOf((await carol.client.listTools()).tools);
    expect(names).toContain('example_echo');
    expect(names).not.toContain('example_count'); // not included
    expect(names.length).toBeGreaterThan(1);
    const main = (await (await legacy('carol')).client.listTools()).tools;
    const readOnlyEverything = main.filter(
      tool => tool.name.startsWith('everything_') && tool.annotations?.readOnlyHint === true,
    );
    expect(names.filter(name => name.startsWith('everything_'))).toEqual(
      namesOf(readOnlyEverything as Named[]),
    );
  });

  it('calls a tool of the endpoint, and answers a tool outside it exactly as an unknown one', async () => {
    const carol = await legacy('carol', 'ops');
    const result = await carol.client.callTool({
      name: 'example_echo',
      arguments: { message: 'through ops' },
    });
    expect(JSON.stringify(result.content)).toContain('through ops');
    const outside = await errorOf(
      carol.client.callTool({ name: 'everything_echo', arguments: { message: 'x' } }),
    );
    const excluded = await errorOf(
      carol.client.callTool({ name: 'example_remove_tool', arguments: { name: 'x' } }),
    );
    const unknown = await errorOf(
      carol.client.callTool({ name: 'example_nothing', arguments: {} }),
    );
    expect(outside?.code).toBe(-32602);
    expect(outside?.message?.replace('everything_echo', 'X')).toBe(
      unknown?.message?.replace('example_nothing', 'X'),
    );
    expect(excluded?.message?.replace('example_remove_tool', 'X')).toBe(
      unknown?.message?.replace('example_nothing', 'X'),
    );
    // The same tool is carol's on the main endpoint.
    const main = await legacy('carol');
    const echoed = await main.client.callTool({
      name: 'everything_echo',
      arguments: { message: 'main' },
    });
    expect(JSON.stringify(echoed.content)).toContain('main');
    await waitFor(
      () =>
        toolCallAuditLines(backend.output()).some(
          line => line.tool === 'echo' && line.server === 'example' && line.status === 'succeeded',
        ),
      10_000,
      'the audit event of the call through the endpoint',
    );
  });

  it('serves 2026-07-28 clients: server/discover names the endpoint, lists and calls are narrowed', async () => {
    const carol = await modern('carol', 'ops');
    expect(carol.getServerVersion()?.name).toBe('backstage-mcp-broker/ops');
    const discovered = await carol.discover();
    expect(discovered.instructions).toBe(OPS_INSTRUCTIONS);
    const tools = (await carol.listTools()).tools;
    expect(namesOf(tools as Named[])).toEqual([
      'example_add_tool',
      'example_confirm',
      'example_count',
      'example_deploy',
      'example_echo',
    ]);
    const result = await carol.callTool({ name: 'example_echo', arguments: { message: 'modern' } });
    expect(JSON.stringify(result.content)).toContain('modern');
    const outside = await errorOf(
      carol.callTool({ name: 'everything_echo', arguments: { message: 'x' } }),
    );
    expect(outside?.code).toBe(-32602);
    const alice = await modern('alice', 'ops');
    expect(namesOf((await alice.listTools()).tools as Named[])).toEqual([
      'example_confirm',
      'example_count',
      'example_echo',
    ]);
  });

  it('answers 404 for an unknown endpoint and for a session used on another path', async () => {
    const unknown = await fetch(`${backend.baseUrl}${endpointPath('nope')}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.carol}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toMatch(
      /No MCP endpoint named "nope"; GET \/api\/mcp-broker\/status lists them/,
    );
    // Without a token the endpoint's path is 401 first: names are not probed anonymously.
    const anonymous = await fetch(`${backend.baseUrl}${endpointPath('nope')}`, { method: 'POST' });
    expect(anonymous.status).toBe(401);

    const main = await legacy('carol');
    const sessionId = main.transport.sessionId!;
    const elsewhere = await fetch(`${backend.baseUrl}${endpointPath('ops')}`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${tokens.carol}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': sessionId,
        'mcp-protocol-version': '2025-11-25',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
    });
    expect(elsewhere.status).toBe(404);
    // The session still works where it was made.
    expect((await main.client.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('lists the endpoints on /status', async () => {
    await legacy('carol', 'ops');
    const status = (await brokerStatus(backend.baseUrl, tokens.carol)) as unknown as {
      endpoints: Array<Record<string, unknown>>;
    };
    expect(status.endpoints).toEqual([
      {
        name: 'ops',
        servers: ['example'],
        missingServers: [],
        unusedOverrides: [],
        tools: 5,
        sessions: expect.any(Number),
      },
      expect.objectContaining({
        name: 'reads',
        servers: ['everything', 'example', 'not-yet-there'],
        missingServers: ['not-yet-there'],
      }),
    ]);
    expect(status.endpoints[0].sessions).toBeGreaterThanOrEqual(1);
  });

  it("sends list_changed to an endpoint's clients only when the endpoint's view changed", async () => {
    const main = await legacy('carol');
    const ops = await legacy('carol', 'ops');
    const reads = await legacy('carol', 'reads');
    const opsModern = await modern('carol', 'ops');
    const readsModern = await modern('carol', 'reads');
    const heard = { opsModern: [] as string[], readsModern: [] as string[] };
    const listen = async (
      client: Awaited<ReturnType<typeof modern>>,
      into: string[],
    ): Promise<void> => {
      client.setNotificationHandler('notifications/tools/list_changed', () => {
        into.push('notifications/tools/list_changed');
      });
      client.setNotificationHandler('notifications/prompts/list_changed', () => {
        into.push('notifications/prompts/list_changed');
      });
      await client.listen({ toolsListChanged: true, promptsListChanged: true });
    };
    await listen(opsModern, heard.opsModern);
    await listen(readsModern, heard.readsModern);
    await Promise.all([main.eventStreamOpen, ops.eventStreamOpen, reads.eventStreamOpen]);

    // A new example tool (no annotations: not read-only, not included in `reads`).
    example.addTool('curated_probe');
    await waitFor(
      () => main.notifications.includes('notifications/tools/list_changed'),
      10_000,
      'the main client to hear the change',
    );
    await waitFor(
      () =>
        ops.notifications.includes('notifications/tools/list_changed') &&
        heard.opsModern.includes('notifications/tools/list_changed'),
      10_000,
      "the ops endpoint's clients to hear it",
    );
    expect(namesOf((await ops.client.listTools()).tools)).toContain('example_curated_probe');
    // `reads` shows nothing of the change: after a marker from the example server, which
    // `reads` does show, no tools/list_changed reached its clients.
    await passMarker([reads, { notifications: heard.readsModern }], () =>
      example.announcePromptsChanged(),
    );
    expect(reads.notifications).not.toContain('notifications/tools/list_changed');
    expect(heard.readsModern).not.toContain('notifications/tools/list_changed');
  });
});
