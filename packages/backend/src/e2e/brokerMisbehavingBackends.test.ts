/*
 * Backends that misbehave rather than die (issue #41), end to end on the development backend:
 * a hand-written server (`startMisbehavingServer`) that answers with another request's id, opens
 * a call's stream and stays silent, sends an event that is not JSON, sends progress forever, or
 * answers with 100 MiB (over the broker's 16 MiB bound on one backend message).
 * Each call ends within its bound (the tool-call timeout, here 3 s) with a JSON-RPC error naming
 * the server, while a second person's calls to the example server go on meanwhile, and the
 * misbehaving server itself still answers a well-formed call afterwards. A third server whose
 * prefixed tool name collides with one of the misbehaving server's is hidden for that name
 * (first in config order wins), reported on `/status` and never called under it.
 * The list cases: a server listing 12,000 tools keeps its first 1,000 (the default
 * `backendLimits.maxListItems`), one whose cursor never ends is read for 50 pages (the default
 * `maxListPages`), both logged once and shown on `/status`; a server that floods
 * `tools/list_changed` (1,000 in a second) is re-listed a few times, not 1,000, and a person's
 * client hears a few notifications, while everyone's calls go on. Every case moves its counter on
 * `/status` (`misbehaviours`).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMisbehavingServer, type MisbehavingServer } from '@internal/test-mcp-backends';
import { startExampleMcpServer } from '@internal/example-mcp-server';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { brokerBackendStatus, brokerStatus, waitFor, waitForBrokerBackends } from './brokerTestKit';

const TOOL_CALL_TIMEOUT_MS = 3000;
/** The broker's defaults: `backendLimits.maxListItems`, `.maxListPages`, `coalesceWindow`. */
const MAX_LIST_ITEMS = 1000;
const MAX_LIST_PAGES = 50;
const COALESCE_WINDOW_MS = 250;

/** The `/status` counter each call case moves. */
const COUNTER_OF: Record<string, string> = {
  wrong_id: 'mismatchedIds',
  silent: 'timeouts',
  malformed: 'malformedMessages',
  endless: 'timeouts',
  huge: 'oversizedMessages',
};

describe('misbehaving backends are bounded and named, and affect no one else (issue #41)', () => {
  let backend: BackendProcess;
  let bad: MisbehavingServer;
  let many: MisbehavingServer;
  let pager: MisbehavingServer;
  let flood: MisbehavingServer;
  const toolListChanges: Record<string, number> = { carol: 0, alice: 0 };
  let example: Awaited<ReturnType<typeof startExampleMcpServer>>;
  const clients: Record<string, Client> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    bad = await startMisbehavingServer();
    many = await startMisbehavingServer({ extraTools: 12_000, pageSize: 500 });
    pager = await startMisbehavingServer({ endlessCursor: true, pageSize: 5 });
    flood = await startMisbehavingServer({ listChangedStream: true });
    example = await startExampleMcpServer({ port: 0 });
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [
            { name: 'bad', url: bad.url },
            { name: 'example', url: example.url },
            // The example server again behind the prefix `bad_`: its `echo` collides with
            // `bad_echo` of the misbehaving server, which comes first in config order.
            { name: 'shadow', url: example.url, toolPrefix: 'bad_' },
            { name: 'many', url: many.url },
            { name: 'pager', url: pager.url },
            { name: 'flood', url: flood.url },
          ],
          toolCallTimeout: { milliseconds: TOOL_CALL_TIMEOUT_MS },
          rateLimits: { overrides: [] },
        },
      },
      startTimeoutMs: 240_000,
    });
    for (const user of ['carol', 'alice']) tokens[user] = await backend.signIn(user);
    await waitForBrokerBackends(
      backend.baseUrl,
      tokens.carol,
      b => b.state === 'connected' && b.counts.tools > 0,
      'both servers listed',
    );
    for (const user of ['carol', 'alice']) {
      const client = new Client({ name: `misbehaving-e2e-${user}`, version: '1.0.0' });
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        toolListChanges[user] += 1;
      });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${tokens[user]}` } },
        }),
      );
      clients[user] = client;
    }
  }, 300_000);

  afterAll(async () => {
    await Promise.all(Object.values(clients).map(c => c.close().catch(() => undefined)));
    await backend?.stop();
    await Promise.all([bad, many, pager, flood, example].map(s => s?.close()));
  }, 30_000);

  /**
   * Starts alice's calls to the example server, one after another, each checked; the function
   * returned stops them and resolves with how many succeeded.
   */
  function aliceCallsMeanwhile(label: string): () => Promise<number> {
    let stop = false;
    let done = 0;
    const calls = (async () => {
      for (let n = 0; !stop; n++) {
        const result = await clients.alice.callTool({
          name: 'example_echo',
          arguments: { message: `${label} ${n}` },
        });
        expect(result.content).toEqual([{ type: 'text', text: `${label} ${n}` }]);
        done += 1;
      }
    })();
    return async () => {
      stop = true;
      await calls;
      return done;
    };
  }

  /** Calls `bad_<tool>` as carol; the outcome and how long it took. */
  async function callBad(tool: string) {
    const started = Date.now();
    const outcome = await clients.carol
      .callTool({ name: `bad_${tool}`, arguments: {} }, undefined, {
        timeout: 60_000,
        onprogress: () => undefined,
      })
      .then(
        result => ({ result: JSON.stringify(result) }),
        error => ({ error: String(error) }),
      );
    return { ...outcome, ms: Date.now() - started };
  }

  it.each(['wrong_id', 'silent', 'malformed', 'endless', 'huge'])(
    '%s: an error naming the server within the bound, while another person’s calls go on',
    async tool => {
      const counter = COUNTER_OF[tool];
      const before = (await brokerBackendStatus(backend.baseUrl, tokens.carol, 'bad'))
        .misbehaviours;
      const others = aliceCallsMeanwhile('meanwhile');
      const started = Date.now() - 1000; // a second's slack for the clocks' resolutions
      const outcome = await callBad(tool);
      const othersDone = await others();
      expect(outcome.ms).toBeLessThan(TOOL_CALL_TIMEOUT_MS + 5000);
      // e.g. `MCP server "bad" ended the call's stream without sending a result`, or `the call to
      // MCP server "bad" exceeded the broker's tool call timeout of 3 s (mcpBroker.toolCallTimeout)`
      expect(outcome).toEqual(
        expect.objectContaining({ error: expect.stringMatching(/MCP server \\?"bad\\?"/) }),
      );
      expect(othersDone).toBeGreaterThan(0);
      const echo = await clients.carol.callTool({ name: 'bad_echo', arguments: { message: 'ok' } });
      expect(echo.content).toEqual([{ type: 'text', text: 'ok' }]);
      const after = (await brokerBackendStatus(backend.baseUrl, tokens.carol, 'bad')).misbehaviours;
      expect(after[counter].count).toBeGreaterThan(before[counter].count);
      expect(Date.parse(after[counter].lastAt!)).toBeGreaterThanOrEqual(started);
    },
    30_000,
  );
  it('a name two servers share after prefixing reaches the first server only, and /status says so', async () => {
    const status = await brokerStatus(backend.baseUrl, tokens.carol);
    expect(status.clashes).toContainEqual({
      kind: 'tool',
      name: 'bad_echo',
      owner: 'bad',
      hidden: 'shadow',
    });
    const { tools } = await clients.carol.listTools();
    expect(tools.filter(t => t.name === 'bad_echo')).toHaveLength(1);
    // The shadow's tools that collide with nothing stay reachable under its prefix.
    expect(tools.map(t => t.name)).toContain('bad_count');
    const before = bad.calls.get('echo') ?? 0;
    const echo = await clients.carol.callTool({ name: 'bad_echo', arguments: { message: 'mine' } });
    expect(echo.content).toEqual([{ type: 'text', text: 'mine' }]);
    expect(bad.calls.get('echo')).toBe(before + 1);
    expect(backend.output()).toMatch(
      /MCP server \\?"shadow\\?": tool \\?"bad_echo\\?" hidden, MCP server \\?"bad\\?"/,
    );
  });

  it('a server listing 12,000 tools is served with its first 1,000, logged once, and /status says so', async () => {
    const status = await brokerBackendStatus(backend.baseUrl, tokens.carol, 'many');
    expect(status.counts.tools).toBe(MAX_LIST_ITEMS);
    expect(status.truncatedLists).toEqual({ tools: 'items' });
    expect(status.misbehaviours.truncatedLists.count).toBeGreaterThan(0);
    // Reading stopped at the bound: two pages of 500, not 24.
    expect(many.toolsListRequests).toBe(2);
    const names = new Set((await clients.carol.listTools()).tools.map(t => t.name));
    expect(names).toContain('many_echo');
    expect(names).toContain(`many_filler_${MAX_LIST_ITEMS - 6}`);
    expect(names).not.toContain(`many_filler_${MAX_LIST_ITEMS - 5}`);
    expect(names).toContain('bad_echo');
    // Another person's view (without these servers) is untouched.
    const alices = (await clients.alice.listTools()).tools.map(t => t.name);
    expect(alices).toContain('example_echo');
    const warnings = backend.output().match(/MCP server \\?"many\\?" listed more than 1000 tools/g);
    expect(warnings).toHaveLength(1);
    const echo = await clients.carol.callTool({ name: 'many_echo', arguments: { message: 'hi' } });
    expect(echo.content).toEqual([{ type: 'text', text: 'hi' }]);
  });

  it('a server whose tools/list cursor never ends is read for 50 pages, and /status says so', async () => {
    const status = await brokerBackendStatus(backend.baseUrl, tokens.carol, 'pager');
    expect(status.state).toBe('connected');
    expect(status.counts.tools).toBe(MAX_LIST_PAGES * 5);
    expect(status.truncatedLists).toEqual({ tools: 'pages' });
    expect(status.misbehaviours.truncatedLists.count).toBeGreaterThan(0);
    // Each listing (the first, and any poll since) stops after exactly 50 pages.
    expect(pager.toolsListRequests % MAX_LIST_PAGES).toBe(0);
    expect(backend.output()).toMatch(
      /MCP server \\?"pager\\?" still had a tools cursor after 50 pages/,
    );
  });

  it('a server flooding list_changed (1,000 in a second) is re-listed a few times, clients hear a few, others go on', async () => {
    await waitFor(
      async () => {
        const status = await brokerStatus(backend.baseUrl, tokens.carol);
        const row = status.backends.find(b => b.name === 'flood');
        return row?.eventStream === 'open' && status.clients.eventStreams >= 2;
      },
      30_000,
      'the flood server’s event stream and both clients’ GET streams open',
    );
    const before = await brokerBackendStatus(backend.baseUrl, tokens.carol, 'flood');
    const listsBefore = flood.toolsListRequests;
    const heardBefore = toolListChanges.carol;
    const others = aliceCallsMeanwhile('during the flood');
    const started = Date.now();
    const sent = await clients.carol.callTool({
      name: 'flood_flood',
      arguments: { count: 1000, overMs: 1000 },
    });
    expect(sent.content).toEqual([{ type: 'text', text: 'sent 1000' }]);
    // Every event was heard: each one either started a re-list or was coalesced into one.
    await waitFor(
      async () => {
        const row = await brokerBackendStatus(backend.baseUrl, tokens.carol, 'flood');
        const coalesced =
          row.misbehaviours.coalescedListChanged.count -
          before.misbehaviours.coalescedListChanged.count;
        return coalesced + (flood.toolsListRequests - listsBefore) >= 1000;
      },
      30_000,
      'the broker to hear all 1,000 events',
    );
    expect(await others()).toBeGreaterThan(0);
    // At most one re-list per coalescing window, plus the one in flight and the one pending.
    const bound = Math.ceil((Date.now() - started) / COALESCE_WINDOW_MS) + 2;
    const relists = flood.toolsListRequests - listsBefore;
    expect(relists).toBeGreaterThan(0);
    expect(relists).toBeLessThanOrEqual(bound);
    expect(relists).toBeLessThan(100);
    // carol sees the flood server's tools, so she is told of its changes, a few times only.
    await waitFor(() => toolListChanges.carol > heardBefore, 10_000, 'carol told of the change');
    const heard = toolListChanges.carol - heardBefore;
    expect(heard).toBeGreaterThan(0);
    expect(heard).toBeLessThanOrEqual(bound);
    const after = await brokerBackendStatus(backend.baseUrl, tokens.carol, 'flood');
    expect(after.misbehaviours.coalescedListChanged.count).toBeGreaterThan(
      before.misbehaviours.coalescedListChanged.count + 800,
    );
    expect(after.state).toBe('connected');
  });
});
