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
 *
 * Then (steps 9–12): a grant with `expiresAt` ends at that instant by the broker's own clock
 * (list_changed, no portal call) and the portal's expiry task announces it once; dave's two
 * requests are bulk-rejected (results in input order, one notification, his tools unchanged);
 * the product in automatic mode approves his next request at once; on PostgreSQL, his grant
 * holds across a restart of the replica serving him.
 *
 * Every row of the matrix (mcpAccessFlowKit.ts) runs it: SQLite with one replica, PostgreSQL
 * with one and with two. With two, the people's MCP sessions are on replica B and the portal
 * calls on A (carol's revocation on B), so every change crosses replicas through `NOTIFY`.
 */
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerUsage, MyMcpUsage } from '@devportal/plugin-mcp-broker-common';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { apiEntityOfMcpServer } from '../testing/catalogEntities';
import {
  createdMcpProduct,
  decideRequest,
  type McpPlan,
  requestedAccess,
} from '../testing/mcpProducts';
import { notificationsOf } from '../testing/notifications';
import { portalCall, STATIC_SERVICE_TOKEN, uniqueName } from '../testing/portalHttp';
import {
  connectFlowClient,
  FlowBackends,
  FlowClient,
  flowRows,
  keyExpiryRunsAfterNow,
  startFlowBackends,
} from './__testUtils__/mcpAccessFlowKit';
import { waitFor } from './brokerTestKit';

/** Generous bounds: they only stop a broken build from hanging (the contract's is 1 s). */
const CHANGE_TIMEOUT_MS = 10_000;
/**
 * How far ahead step 9's `expiresAt` lies: time enough to request, approve and see the tools
 * on a loaded machine (the test checks it was).
 */
const EXPIRES_AHEAD_MS = 15_000;
const NAMESPACE = 'mcp-access';

describe.each(flowRows().map(row => [row.name, row] as const))(
  'MCP access requested and approved in the portal, honoured by the broker (real backend, RBAC, catalog; %s)',
  (_name, row) => {
    let example: ExampleMcpServer;
    let backends: FlowBackends;
    let alice: FlowClient;
    let dave: FlowClient | undefined;
    const tokens: Record<string, string> = {};
    /** Replica A: the portal calls (and the only replica of a one-replica row). */
    const portal = () => backends.portal;

    beforeAll(async () => {
      example = await startExampleMcpServer({ port: 0 });
      backends = await startFlowBackends(row, [
        { name: 'granted', url: example.url, owner: 'payments-team' },
      ]);
      for (const user of ['alice', 'bob', 'carol', 'dave']) {
        tokens[user] = await portal().signIn(user);
      }
      // The portal looks the server up in the catalog (its owner decides who may offer it).
      await waitFor(
        () => apiEntityOfMcpServer(portal(), STATIC_SERVICE_TOKEN, 'granted'),
        60_000,
        'the server in the catalog',
      );
      alice = await connectFlowClient(backends.mcp, tokens.alice);
    }, 300_000);

    afterAll(async () => {
      await alice?.close();
      await dave?.close();
      await backends?.stop();
      await example?.close();
    }, 60_000);

    const aliceTools = () => alice.toolsOf('granted');
    /** bob's new Published product on server `granted`: its namespace and name. */
    const grantedProduct = async (prefix: string, displayName: string, plans: McpPlan[]) => {
      const product = { namespace: NAMESPACE, name: uniqueName(prefix) };
      await createdMcpProduct(portal(), tokens.bob, {
        ...product,
        displayName,
        server: 'granted',
        plans,
      });
      return product;
    };
    /** Resolves once `client` got a `tools/list_changed` after its `seen`-th one. */
    const listChangedAfter = (client: FlowClient, seen: number, what: string) =>
      waitFor(() => client.listChangedAt.length > seen, CHANGE_TIMEOUT_MS, what);
    const usageAs = async (user: string, path: string) => {
      const response = await fetch(`${portal().baseUrl}/api/mcp-broker/usage${path}`, {
        headers: { Authorization: `Bearer ${tokens[user]}` },
      });
      return { status: response.status, body: await response.json() };
    };
    const grantsAsCarol = async () =>
      (
        await portalCall(portal(), 'GET', `/mcp/grants?namespace=${NAMESPACE}`, {
          token: tokens.carol,
        })
      ).body as { items: Array<{ subject: string; target: { name: string } }> };

    it('approval brings the server’s tools to the person at once, revocation takes them away', async () => {
      // Before: the fixture policy lets alice use read-only tools only.
      const readOnly = await aliceTools();
      expect(readOnly).toContain('granted_echo');
      expect(readOnly).not.toContain('granted_add_tool');

      const product = await grantedProduct('granted-tools', 'Granted tools', [
        { tier: 'bronze', calls: 3, per: 'day' },
      ]);
      const { key } = await requestedAccess(portal(), tokens.alice, product, 'bronze');
      expect((await grantsAsCarol()).items).toEqual([]);

      const before = alice.listChangedAt.length;
      const approved = await decideRequest(portal(), tokens.bob, key, 'approve', 'welcome');
      expect(approved.status).toBe(200);
      // The module wrote the grant before the portal answered; her replica hears of it at once.
      await listChangedAfter(alice, before, 'tools/list_changed on grant');
      const granted = await aliceTools();
      expect(granted).toEqual(expect.arrayContaining([...readOnly, 'granted_add_tool']));
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

      const beforeRevoke = alice.listChangedAt.length;
      const revoked = await decideRequest(portal(), tokens.bob, key, 'revoke', 'project over');
      expect(revoked.status).toBe(204);
      await listChangedAfter(alice, beforeRevoke, 'tools/list_changed on revocation');
      expect(await aliceTools()).toEqual(readOnly);
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
      const product = await grantedProduct('deploy-tools', 'Deploy tools', [
        { tier: 'gold', calls: 100, per: 'day' },
      ]);
      const { key } = await requestedAccess(portal(), tokens.alice, product, 'gold');
      const beforeApproval = alice.listChangedAt.length;
      const approved = await decideRequest(portal(), tokens.bob, key, 'approve', 'ship it');
      expect(approved.status).toBe(200);
      await listChangedAfter(alice, beforeApproval, 'tools/list_changed on grant');
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

      const beforeRevoke = alice.listChangedAt.length;
      const revoked = await decideRequest(backends.mcp, tokens.carol, key, 'revoke', 'audit');
      expect(revoked.status).toBe(204);
      await listChangedAfter(alice, beforeRevoke, 'tools/list_changed on revocation');
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

    it('ends a grant at its expiresAt without a portal call; the expiry task announces it once', async () => {
      const displayName = 'Expiring tools';
      const product = await grantedProduct('expiring-tools', displayName, [
        { tier: 'gold', calls: 100, per: 'day' },
      ]);
      const expiresAt = Date.now() + EXPIRES_AHEAD_MS;
      const { key } = await requestedAccess(portal(), tokens.alice, product, 'gold', {
        expiresAt: new Date(expiresAt).toISOString(),
      });
      const beforeApproval = alice.listChangedAt.length;
      const approved = await decideRequest(portal(), tokens.bob, key, 'approve', 'for a while');
      expect(approved.status).toBe(200);
      await listChangedAfter(alice, beforeApproval, 'tools/list_changed on grant');
      expect(await aliceTools()).toContain('granted_add_tool');
      // (Otherwise the machine was too slow for this test's EXPIRES_AHEAD_MS: what follows proves nothing.)
      expect(Date.now()).toBeLessThan(expiresAt);

      // No portal call from here on: each replica's own timer ends the grant at expiresAt.
      await waitFor(
        () => alice.listChangedAt.some(at => at >= expiresAt),
        EXPIRES_AHEAD_MS + CHANGE_TIMEOUT_MS,
        'tools/list_changed at expiresAt',
      );
      expect(await aliceTools()).not.toContain('granted_add_tool');
      expect((await grantsAsCarol()).items).toEqual([]);

      // The portal's task (every 2 s here) announces it: one notification, however many runs.
      const expired = async () =>
        (
          await notificationsOf(portal(), tokens.alice, `APIProduct ${NAMESPACE}/${product.name}`)
        ).filter(n => n.payload.title === `Your access to ${displayName} expired`);
      await waitFor(async () => (await expired()).length > 0, 60_000, 'the expiry notification');
      await keyExpiryRunsAfterNow(portal(), STATIC_SERVICE_TOKEN);
      expect(await expired()).toHaveLength(1);
      // Expired is not a phase: the request still reads Approved.
      const mine = await portalCall(portal(), 'GET', `/requests/my?namespace=${NAMESPACE}`, {
        token: tokens.alice,
      });
      expect(
        (mine.body.items as Array<{ metadata: { name: string }; status: { phase: string } }>).find(
          item => item.metadata.name === key.name,
        )?.status.phase,
      ).toBe('Approved');
    }, 120_000);

    /** dave's product (bronze and gold): rejected in bulk first, then in automatic mode. */
    let teamProduct: { namespace: string; name: string };
    const teamDisplayName = 'Team tools';

    it('bulk-rejects dave’s two requests with one reason: input order, one notification, his tools unchanged', async () => {
      dave = await connectFlowClient(backends.mcp, tokens.dave);
      const before = await dave.toolsOf('granted');
      expect(before).toContain('granted_echo');
      expect(before).not.toContain('granted_add_tool');

      teamProduct = await grantedProduct('team-tools', teamDisplayName, [
        { tier: 'bronze', calls: 5, per: 'day' },
        { tier: 'gold', calls: 100, per: 'day' },
      ]);
      const refs: Array<{ namespace: string; name: string }> = [];
      for (const tier of ['bronze', 'gold']) {
        refs.push((await requestedAccess(portal(), tokens.dave, teamProduct, tier)).key);
      }
      // Gold first: the answer follows the input, not the order of creation.
      const inputOrder = [refs[1], refs[0]];
      const rejected = await portalCall(portal(), 'POST', '/requests/bulk-reject', {
        token: tokens.bob,
        body: { requests: inputOrder, reason: 'not this quarter' },
      });
      expect(rejected.status).toBe(200);
      expect(rejected.body.results).toEqual(
        inputOrder.map(ref =>
          expect.objectContaining({
            ...ref,
            success: true,
            apiKey: expect.objectContaining({
              status: expect.objectContaining({ phase: 'Rejected', reason: 'not this quarter' }),
            }),
          }),
        ),
      );

      // One notification for both (grouped per requester and call), with the reason.
      const rejections = async () =>
        (
          await notificationsOf(
            portal(),
            tokens.dave,
            `APIProduct ${NAMESPACE}/${teamProduct.name}`,
          )
        ).filter(n => n.payload.title.includes('rejected'));
      await waitFor(
        async () => (await rejections()).length > 0,
        30_000,
        'the rejection notification',
      );
      expect(await rejections()).toEqual([
        expect.objectContaining({
          payload: expect.objectContaining({
            title: `2 of your access requests for ${teamDisplayName} were rejected`,
            description: `2 of your access requests for ${teamDisplayName} were rejected: not this quarter`,
          }),
        }),
      ]);
      expect(await dave.toolsOf('granted')).toEqual(before);
    }, 120_000);

    it('approves dave’s request at once when the product is automatic, and his list_changed arrives', async () => {
      const patched = await portalCall(
        portal(),
        'PATCH',
        `/apiproducts/${NAMESPACE}/${teamProduct.name}`,
        {
          token: tokens.bob,
          body: { spec: { approvalMode: 'automatic' } },
          contentType: 'application/merge-patch+json',
        },
      );
      expect(patched.status).toBe(200);
      const seen = dave!.listChangedAt.length;
      const requested = await requestedAccess(portal(), tokens.dave, teamProduct, 'gold');
      expect(requested.body.status).toEqual(
        expect.objectContaining({ phase: 'Approved', reviewedBy: 'system:automatic-approval' }),
      );
      await listChangedAfter(dave!, seen, "dave's tools/list_changed on automatic approval");
      expect(await dave!.toolsOf('granted')).toContain('granted_add_tool');
    }, 60_000);

    if (row.database.name === 'PostgreSQL') {
      it('keeps dave’s grant across a restart of the replica serving him: his client reconnects and lists the tool', async () => {
        await dave!.close();
        await backends.restartMcp();
        // The restarted replica loads the grants from the feed table; its tools come once the
        // broker has connected to the server again (a condition, polled).
        dave = await connectFlowClient(backends.mcp, tokens.dave);
        await waitFor(
          async () => (await dave!.toolsOf('granted')).includes('granted_echo'),
          60_000,
          "the granted server's tools on the restarted replica",
        );
        expect(await dave.toolsOf('granted')).toContain('granted_add_tool');
        // alice has no grant (revoked, expired): the same replica lists her read-only tools only.
        const aliceAgain = await connectFlowClient(backends.mcp, tokens.alice);
        try {
          expect(await aliceAgain.toolsOf('granted')).not.toContain('granted_add_tool');
        } finally {
          await aliceAgain.close();
        }
      }, 240_000);
    }
  },
);
