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
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startMisbehavingServer, type MisbehavingServer } from '@internal/test-mcp-backends';
import { startExampleMcpServer } from '@internal/example-mcp-server';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { brokerStatus, waitForBrokerBackends } from './brokerTestKit';

const TOOL_CALL_TIMEOUT_MS = 3000;

describe('misbehaving backends are bounded and named, and affect no one else (issue #41)', () => {
  let backend: BackendProcess;
  let bad: MisbehavingServer;
  let example: Awaited<ReturnType<typeof startExampleMcpServer>>;
  const clients: Record<string, Client> = {};
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    bad = await startMisbehavingServer();
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
          ],
          toolCallTimeout: { milliseconds: TOOL_CALL_TIMEOUT_MS },
          rateLimits: { overrides: [] },
        },
      },
      startTimeoutMs: 120_000,
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
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${tokens[user]}` } },
        }),
      );
      clients[user] = client;
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(Object.values(clients).map(c => c.close().catch(() => undefined)));
    await backend?.stop();
    await Promise.all([bad?.close(), example?.close()]);
  }, 30_000);

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
      let othersDone = 0;
      let stop = false;
      const others = (async () => {
        for (let n = 0; !stop; n++) {
          const result = await clients.alice.callTool({
            name: 'example_echo',
            arguments: { message: `meanwhile ${n}` },
          });
          expect(result.content).toEqual([{ type: 'text', text: `meanwhile ${n}` }]);
          othersDone += 1;
        }
      })();
      const outcome = await callBad(tool);
      stop = true;
      await others;
      expect(outcome.ms).toBeLessThan(TOOL_CALL_TIMEOUT_MS + 5000);
      // e.g. `MCP server "bad" ended the call's stream without sending a result`, or `the call to
      // MCP server "bad" exceeded the broker's tool call timeout of 3 s (mcpBroker.toolCallTimeout)`
      expect(outcome).toEqual(
        expect.objectContaining({ error: expect.stringMatching(/MCP server \\?"bad\\?"/) }),
      );
      expect(othersDone).toBeGreaterThan(0);
      const echo = await clients.carol.callTool({ name: 'bad_echo', arguments: { message: 'ok' } });
      expect(echo.content).toEqual([{ type: 'text', text: 'ok' }]);
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
});
