/*
 * One workflow for APIs and MCP tools (contract mcp-access §10.2), on the real development
 * backend: the real catalog with the broker's catalog module, the portal, the broker with the
 * portal's grant module (mcp-broker-backend-module-portal), the RBAC plugin reading the
 * development fixture (examples/rbac-conditional-policies.yaml: role mcp-user may use the tools
 * of servers it was granted, HAS_ACCESS_GRANT), and a real example MCP server behind the broker
 * as server `granted`, owned by payments-team.
 *
 * bob (payments-team) offers the server as an MCP product; alice, an MCP user, sees only its
 * read-only tools; she asks for access, bob approves, and her client gets `list_changed` and
 * every tool of the server, limited by her plan (3 calls a day); bob revokes, and the tools go
 * again. Her calls then show in her usage (GET /api/mcp-broker/usage/my, contract §7) once the
 * broker flushed them, and to bob as the server's owner (IS_SERVER_OWNER in the fixture policy)
 * and carol as an admin, never to alice as someone else's server usage. Last, a call admitted
 * before a revocation is not cut off: alice's `deploy` waits on its elicitation while carol
 * revokes, her tools go, and the call still ends `deployed staging` once she answers.
 */
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerUsage, MyMcpUsage } from '@devportal/plugin-mcp-broker-common';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { apiEntityOfMcpServer } from '../testing/catalogEntities';
import { createMcpProduct, decideRequest, requestAccess } from '../testing/mcpProducts';
import { portalCall, STATIC_SERVICE_TOKEN, uniqueName } from '../testing/portalHttp';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { BrokerClient, connectBrokerClient, waitFor } from './brokerTestKit';

/** Generous bounds: they only stop a broken build from hanging (the contract's is 1 s). */
const CHANGE_TIMEOUT_MS = 10_000;
const NAMESPACE = 'mcp-access';

describe('MCP access requested and approved in the portal, honoured by the broker (real backend, RBAC, catalog)', () => {
  let example: ExampleMcpServer;
  let backend: BackendProcess;
  let alice: BrokerClient;
  const tokens: Record<string, string> = {};
  let listChanged = 0;

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    backend = await startBackendProcess({
      config: {
        mcpBroker: {
          servers: [{ name: 'granted', url: example.url, owner: 'payments-team' }],
          // Usage reaches the table within a second (default 30 s).
          usage: { flushInterval: { seconds: 1 } },
        },
      },
      startTimeoutMs: 120_000,
    });
    for (const user of ['alice', 'bob', 'carol', 'dave']) tokens[user] = await backend.signIn(user);
    // The portal looks the server up in the catalog (its owner decides who may offer it).
    await waitFor(
      () => apiEntityOfMcpServer(backend, STATIC_SERVICE_TOKEN, 'granted'),
      60_000,
      'the server in the catalog',
    );
    alice = await connectBrokerClient(backend.baseUrl, tokens.alice, undefined, {
      elicitation: {},
    });
    alice.client.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      listChanged += 1;
    });
    await alice.eventStreamOpen;
  }, 180_000);

  afterAll(async () => {
    await alice?.close();
    await backend?.stop();
    await example?.close();
  }, 30_000);

  const aliceTools = async () =>
    (await alice.client.listTools()).tools
      .map(tool => tool.name)
      .filter(name => name.startsWith('granted_'))
      .sort();
  const usageAs = async (user: string, path: string) => {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/usage${path}`, {
      headers: { Authorization: `Bearer ${tokens[user]}` },
    });
    return { status: response.status, body: await response.json() };
  };
  const grantsAsCarol = async () =>
    (
      await portalCall(backend, 'GET', `/mcp/grants?namespace=${NAMESPACE}`, {
        token: tokens.carol,
      })
    ).body as { items: Array<{ subject: string; target: { name: string } }> };

  it('approval brings the server’s tools to the person at once, revocation takes them away', async () => {
    // Before: the fixture policy lets alice use read-only tools only.
    const readOnly = await aliceTools();
    expect(readOnly).toContain('granted_echo');
    expect(readOnly).not.toContain('granted_add_tool');

    const product = uniqueName('granted-tools');
    const created = await createMcpProduct(backend, tokens.bob, {
      namespace: NAMESPACE,
      name: product,
      displayName: 'Granted tools',
      server: 'granted',
      plans: [{ tier: 'bronze', calls: 3, per: 'day' }],
    });
    expect(created.status).toBe(201);

    const requested = await requestAccess(
      backend,
      tokens.alice,
      { namespace: NAMESPACE, name: product },
      'bronze',
    );
    expect(requested.status).toBe(201);
    const key = requested.body.metadata as { namespace: string; name: string };
    expect((await grantsAsCarol()).items).toEqual([]);

    const before = listChanged;
    const approved = await decideRequest(backend, tokens.bob, key, 'approve', 'welcome');
    expect(approved.status).toBe(200);
    // The module wrote the grant before the portal answered: the tools are there at once.
    const granted = await aliceTools();
    expect(granted).toEqual(expect.arrayContaining([...readOnly, 'granted_add_tool']));
    await waitFor(() => listChanged > before, CHANGE_TIMEOUT_MS, 'tools/list_changed on grant');
    expect((await grantsAsCarol()).items).toEqual([
      expect.objectContaining({
        subject: 'user:default/alice',
        target: { kind: 'MCPServer', name: 'granted' },
      }),
    ]);
    const echo = await alice.client.callTool({
      name: 'granted_echo',
      arguments: { message: 'granted' },
    });
    expect(echo.content).toEqual([{ type: 'text', text: 'granted' }]);
    // The plan is her limit on the server (every tool the grant covers): 3 calls a day.
    for (let i = 0; i < 2; i += 1) {
      await alice.client.callTool({ name: 'granted_echo', arguments: { message: `${i}` } });
    }
    const limited = await alice.client
      .callTool({ name: 'granted_echo', arguments: { message: 'one too many' } })
      .then(
        () => 'admitted',
        error => String(error),
      );
    expect(limited).toMatch(
      // (a 429 with Retry-After: the SDK's error quotes the JSON body, escaping its quotes)
      /Rate limit reached: your plan \\?"bronze\\?" of Granted tools allows 3 tool calls per day \(UTC\) on server \\?"granted\\?"; retry in \d+ s/,
    );

    // Her plan's meter: the rate limiter's count in the day's window.
    const planned = (await usageAs('alice', '/my')).body as MyMcpUsage;
    expect(planned.grants).toEqual([
      expect.objectContaining({
        target: { kind: 'server', name: 'granted' },
        plan: 'bronze',
        limits: [expect.objectContaining({ calls: 3, windowMs: 86_400_000, used: 3 })],
      }),
    ]);

    const beforeRevoke = listChanged;
    const revoked = await decideRequest(backend, tokens.bob, key, 'revoke', 'project over');
    expect(revoked.status).toBe(204);
    expect(await aliceTools()).toEqual(readOnly);
    await waitFor(
      () => listChanged > beforeRevoke,
      CHANGE_TIMEOUT_MS,
      'tools/list_changed on revocation',
    );
    const refused = await alice.client.callTool({ name: 'granted_add_tool', arguments: {} }).then(
      result => ({ result }),
      error => ({ error: String(error) }),
    );
    // Unknown to her again: an error naming the tool (a JSON-RPC error, or an error result).
    expect(JSON.stringify(refused)).toMatch(/granted_add_tool/);
    expect('error' in refused || (refused.result as { isError?: boolean }).isError === true).toBe(
      true,
    );
    expect((await grantsAsCarol()).items).toEqual([]);
  }, 120_000);

  it('shows the calls to the person once flushed, and to the server’s owner and admins only', async () => {
    const today = new Date().toISOString().slice(0, 10);
    // Admitted echo calls: 3 (one refused by the plan); the call of a revoked tool is not counted.
    const mine = (await waitFor(
      async () => {
        const { body } = await usageAs('alice', '/my?server=granted');
        const echo = (body as MyMcpUsage).days.find(day => day.tool === 'echo');
        return echo?.rateLimited === 1 && echo.calls === 3 && (body as MyMcpUsage);
      },
      CHANGE_TIMEOUT_MS,
      "alice's calls in /usage/my",
    )) as MyMcpUsage;
    expect(mine.subject).toBe('user:default/alice');
    expect(mine.days).toEqual([
      { day: today, server: 'granted', tool: 'echo', calls: 3, errors: 0, rateLimited: 1 },
    ]);
    expect(mine.grants).toEqual([]); // revoked
    for (const owner of ['bob', 'dave', 'carol']) {
      const { status, body } = await usageAs(owner, '/servers/granted?days=7');
      expect(status).toBe(200);
      expect((body as McpServerUsage).people).toEqual([
        expect.objectContaining({ principal: 'user:default/alice', calls: 3, rateLimited: 1 }),
      ]);
    }
    const denied = await usageAs('alice', '/servers/granted');
    expect(denied.status).toBe(403);
    expect(denied.body.error.message).toContain('mcp-broker.usage.read');
  }, 60_000);

  it('lets a call admitted before the revocation run to its end: deploy waits on its elicitation', async () => {
    const product = uniqueName('deploy-tools');
    const created = await createMcpProduct(backend, tokens.bob, {
      namespace: NAMESPACE,
      name: product,
      displayName: 'Deploy tools',
      server: 'granted',
      plans: [{ tier: 'gold', calls: 100, per: 'day' }],
    });
    expect(created.status).toBe(201);
    const requested = await requestAccess(
      backend,
      tokens.alice,
      { namespace: NAMESPACE, name: product },
      'gold',
    );
    expect(requested.status).toBe(201);
    const key = requested.body.metadata as { namespace: string; name: string };
    const approved = await decideRequest(backend, tokens.bob, key, 'approve', 'ship it');
    expect(approved.status).toBe(200);
    expect(await aliceTools()).toContain('granted_deploy');

    // The first elicitation is held until the test answers it; any later one is declined at
    // once (a deploy admitted after the revocation would end `cancelled`, not hang).
    const asked: string[] = [];
    let answerFirst!: (action: 'accept' | 'decline') => void;
    const firstAsked = new Promise<void>(resolve => {
      alice.client.setRequestHandler(ElicitRequestSchema, request => {
        asked.push(request.params.message);
        if (asked.length > 1) return { action: 'decline' };
        resolve();
        return new Promise(done => {
          answerFirst = action => done({ action, ...(action === 'accept' && { content: {} }) });
        });
      });
    });
    const running = alice.client.callTool(
      { name: 'granted_deploy', arguments: { target: 'staging' } },
      undefined,
      { timeout: 120_000 },
    );
    await firstAsked;
    expect(asked).toEqual(['Deploy staging?']);

    const beforeRevoke = listChanged;
    const revoked = await decideRequest(backend, tokens.carol, key, 'revoke', 'audit');
    expect(revoked.status).toBe(204);
    await waitFor(
      () => listChanged > beforeRevoke,
      CHANGE_TIMEOUT_MS,
      'tools/list_changed on revocation',
    );
    expect(await aliceTools()).not.toContain('granted_deploy');
    // A new call is refused (an error naming the tool), without asking anything.
    const refused = await alice.client
      .callTool({ name: 'granted_deploy', arguments: { target: 'production' } })
      .then(
        result => ({ result }),
        error => ({ error: String(error) }),
      );
    expect(JSON.stringify(refused)).toMatch(/granted_deploy/);
    expect('error' in refused || (refused.result as { isError?: boolean }).isError === true).toBe(
      true,
    );
    expect(asked).toEqual(['Deploy staging?']);

    // The call admitted before the revocation is still running, and finishes with its answer.
    answerFirst('accept');
    expect((await running).content).toEqual([{ type: 'text', text: 'deployed staging' }]);
  }, 120_000);
});
