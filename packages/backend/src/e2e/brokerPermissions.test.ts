/*
 * Access control of the MCP broker end to end (spec §8): the real backend process with the real
 * RBAC plugin reading copies of the development fixture (examples/rbac-policy.csv and
 * rbac-conditional-policies.yaml), the official SDK client, the example MCP server and
 * server-everything. The decision age is lowered to 2 s so that a policy edit can be observed
 * without waiting 30 s; the test waits for the change itself, never for a fixed time.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { McpBrokerCatalog } from '@devportal/plugin-mcp-broker-common';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { EverythingServer, startEverythingServer } from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { LEGACY_INITIALIZE_REQUEST, mcpRawPost } from '../testing/mcpRawPost';
import {
  BrokerClient,
  connectBrokerClient,
  passMarker,
  toolCallAuditLines,
  waitFor,
} from './brokerTestKit';

const examplesDir = path.resolve(__dirname, '..', '..', '..', '..', 'examples');
/** A static token restricted as the plugin README shows (sessions and tools only). */
const RESTRICTED_TOKEN = 'restricted-static-token-0123456789';
/** Another static token of the same subject, without restrictions. */
const UNRESTRICTED_TOKEN = 'unrestricted-static-token-0123456789';

/** The error a rejected SDK call carries (code and message), for comparing answers. */
async function errorOf(call: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await call;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('the call succeeded');
}

describe('MCP broker permissions (real backend process, real RBAC plugin, fixture policy)', () => {
  let backend: BackendProcess;
  let example: ExampleMcpServer;
  let everything: EverythingServer;
  let policyDir: string;
  const clients: BrokerClient[] = [];
  const tokens: Record<string, string> = {};

  const mcpUrl = () => `${backend.baseUrl}/api/mcp-broker/mcp`;
  const connect = async (user: string) => {
    const client = await connectBrokerClient(backend.baseUrl, tokens[user]);
    clients.push(client);
    return client;
  };
  const statusAs = (token: string) =>
    fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
      headers: { Authorization: `Bearer ${token}` },
    });
  const toolNames = async (client: BrokerClient) =>
    (await client.client.listTools()).tools.map(t => t.name).sort();

  beforeAll(async () => {
    policyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'broker-rbac-'));
    for (const file of ['rbac-policy.csv', 'rbac-conditional-policies.yaml']) {
      fs.copyFileSync(path.join(examplesDir, file), path.join(policyDir, file));
    }
    [example, everything] = await Promise.all([
      startExampleMcpServer({ port: 0 }),
      startEverythingServer(),
    ]);
    backend = await startBackendProcess({
      config: {
        backend: {
          auth: {
            externalAccess: [
              {
                type: 'static',
                options: { token: RESTRICTED_TOKEN, subject: 'mcp-automation' },
                accessRestrictions: [
                  {
                    plugin: 'mcp-broker',
                    permission: ['mcp-broker.session.create', 'mcp-broker.tool.use'],
                  },
                ],
              },
              {
                type: 'static',
                options: { token: UNRESTRICTED_TOKEN, subject: 'mcp-automation' },
              },
            ],
          },
        },
        permission: {
          enabled: true,
          rbac: {
            'policies-csv-file': path.join(policyDir, 'rbac-policy.csv'),
            conditionalPoliciesFile: path.join(policyDir, 'rbac-conditional-policies.yaml'),
            policyFileReload: true,
            pluginsWithPermission: ['catalog', 'permission', 'portal', 'mcp-broker'],
            admin: { users: [{ name: 'user:default/carol' }] },
          },
        },
        mcpBroker: {
          servers: [
            { name: 'example', url: example.url },
            { name: 'everything', url: everything.url },
          ],
          permissionDecisionMaxAge: { seconds: 2 },
        },
      },
      // Info level: the auditor's tool-call events (severity medium) are printed.
      env: { LOG_LEVEL: 'info' },
    });
    for (const user of ['alice', 'carol', 'erin']) tokens[user] = await backend.signIn(user);
    // Both backends listed (carol sees everything).
    const carol = await connect('carol');
    await waitFor(
      async () => {
        const names = await toolNames(carol);
        return names.includes('example_add_tool') && names.includes('everything_echo');
      },
      30_000,
      'both backends to be listed',
    );
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close()));
    await backend?.stop();
    await Promise.all([example?.close(), everything?.kill()]);
    fs.rmSync(policyDir, { recursive: true, force: true });
  }, 30_000);

  it('lists its permissions and rules for policy tools (RBAC UI) at the metadata endpoint', async () => {
    const response = await fetch(
      `${backend.baseUrl}/api/mcp-broker/.well-known/backstage/permissions/metadata`,
      { headers: { Authorization: `Bearer ${tokens.carol}` } },
    );
    expect(response.status).toBe(200);
    const metadata = await response.json();
    expect(metadata.permissions.map((p: { name: string }) => p.name).sort()).toEqual([
      'mcp-broker.prompt.use',
      'mcp-broker.resource.read',
      'mcp-broker.server.read',
      'mcp-broker.session.create',
      'mcp-broker.status.read',
      'mcp-broker.tool.approve',
      'mcp-broker.tool.use',
      'mcp-broker.usage.read',
    ]);
    const rules = metadata.rules.map(
      (r: { name: string; resourceType: string }) => `${r.resourceType}/${r.name}`,
    );
    expect(rules.sort()).toEqual([
      'mcp-broker-prompt/HAS_ACCESS_GRANT',
      'mcp-broker-prompt/HAS_NAME',
      'mcp-broker-prompt/IS_ON_SERVER',
      'mcp-broker-resource/HAS_ACCESS_GRANT',
      'mcp-broker-resource/HAS_NAME',
      'mcp-broker-resource/IS_ON_SERVER',
      'mcp-broker-server/IS_ON_SERVER',
      'mcp-broker-server/IS_SERVER_OWNER',
      'mcp-broker-tool/HAS_ACCESS_GRANT',
      'mcp-broker-tool/HAS_NAME',
      'mcp-broker-tool/HAS_TOOL_ANNOTATION',
      'mcp-broker-tool/IS_ON_SERVER',
    ]);
  });

  it("answers erin's initialize with 403 and a JSON-RPC error naming the permission", async () => {
    const response = await mcpRawPost(mcpUrl(), tokens.erin, LEGACY_INITIALIZE_REQUEST);
    expect(response.status).toBe(403);
    expect(response.headers.get('mcp-session-id')).toBeNull();
    const body = await response.json();
    expect(body).toMatchObject({ jsonrpc: '2.0', id: 1, error: { code: expect.any(Number) } });
    expect(body.error.message).toContain('mcp-broker.session.create');
  });

  it("lists only alice's permitted tools, and every prompt and resource", async () => {
    const alice = await connect('alice');
    const names = await toolNames(alice);
    // The example server's three named tools, and server-everything's read-only tools only.
    expect(names).toEqual(
      expect.arrayContaining([
        'example_echo',
        'example_count',
        'example_confirm',
        'everything_echo',
      ]),
    );
    expect(names).not.toContain('example_add_tool');
    expect(names).not.toContain('example_remove_tool');
    expect(names).toContain('everything_trigger-long-running-operation'); // declares readOnlyHint
    expect(names).not.toContain('everything_toggle-simulated-logging');
    expect(names).not.toContain('everything_gzip-file-as-resource');
    const { tools: everythingTools } = await alice.client.listTools();
    for (const tool of everythingTools.filter(t => t.name.startsWith('everything_'))) {
      expect(tool.annotations?.readOnlyHint).toBe(true);
    }
    expect((await alice.client.listPrompts()).prompts.map(p => p.name)).toContain(
      'example_greeting',
    );
    expect((await alice.client.listResources()).resources.map(r => r.uri)).toContain(
      'example://readme',
    );
    const readme = await alice.client.readResource({ uri: 'example://readme' });
    expect(readme.contents[0]).toMatchObject({ uri: 'example://readme' });
  }, 30_000);

  it("serves alice's permitted catalog grouped by server at GET /catalog, exactly her MCP lists", async () => {
    const catalogAs = (token?: string) =>
      fetch(`${backend.baseUrl}/api/mcp-broker/catalog`, {
        headers: token === undefined ? {} : { Authorization: `Bearer ${token}` },
      });
    const response = await catalogAs(tokens.alice);
    expect(response.status).toBe(200);
    const catalog = (await response.json()) as McpBrokerCatalog;
    expect(catalog.servers.map(s => s.server)).toEqual(['example', 'everything']);
    const alice = await connect('alice');
    const listed = {
      tools: (await alice.client.listTools()).tools.map(t => t.name).sort(),
      prompts: (await alice.client.listPrompts()).prompts.map(p => p.name).sort(),
      resources: (await alice.client.listResources()).resources.map(r => r.uri).sort(),
    };
    const grouped = {
      tools: catalog.servers.flatMap(s => s.tools.map(t => t.name)).sort(),
      prompts: catalog.servers.flatMap(s => s.prompts.map(p => p.name)).sort(),
      resources: catalog.servers.flatMap(s => s.resources.map(r => r.uri)).sort(),
    };
    expect(grouped).toEqual(listed);
    // Every item sits under the server that serves it (its prefix), and denied ones are absent.
    for (const { server, tools, prompts } of catalog.servers) {
      for (const { name } of [...tools, ...prompts])
        expect(name.startsWith(`${server}_`)).toBe(true);
    }
    expect(grouped.tools).not.toContain('example_add_tool');
    const echo = catalog.servers[0].tools.find(t => t.name === 'example_echo');
    expect(echo?.description).toEqual(expect.any(String));

    const erin = await catalogAs(tokens.erin);
    expect(erin.status).toBe(403);
    expect((await erin.json()).error.message).toContain('mcp-broker.session.create');
    expect((await catalogAs()).status).toBe(401);
  }, 30_000);

  it("answers alice's call of a denied tool exactly like an unknown tool, and nothing reaches the backend", async () => {
    const alice = await connect('alice');
    const sessionsBefore = example.sessionCount();
    const denied = await errorOf(
      alice.client.callTool({ name: 'example_add_tool', arguments: { name: 'sneaky' } }),
    );
    const unknown = await errorOf(
      alice.client.callTool({ name: 'example_no_such_tool', arguments: {} }),
    );
    expect(denied.code).toBe(-32602);
    expect(denied).toEqual({
      code: unknown.code,
      message: unknown.message.replace('example_no_such_tool', 'example_add_tool'),
    });
    // No backend session was opened for alice's session, and the tool was not added.
    expect(example.sessionCount()).toBe(sessionsBefore);
    const carol = await connect('carol');
    expect(await toolNames(carol)).not.toContain('example_sneaky');
    // A permitted call goes through.
    const echoed = await alice.client.callTool({
      name: 'example_echo',
      arguments: { message: 'allowed' },
    });
    expect(echoed.content).toEqual([{ type: 'text', text: 'allowed' }]);
  }, 30_000);

  it('gives carol every tool and the status; alice gets 403 on /status', async () => {
    const carol = await connect('carol');
    const names = await toolNames(carol);
    expect(names).toEqual(
      expect.arrayContaining([
        'example_add_tool',
        'example_remove_tool',
        'everything_toggle-simulated-logging',
      ]),
    );
    const count = await carol.client.callTool({
      name: 'everything_get-sum',
      arguments: { a: 2, b: 3 },
    });
    expect(JSON.stringify(count.content)).toContain('5');
    const status = await statusAs(tokens.carol);
    expect(status.status).toBe(200);
    expect((await status.json()).backends.map((b: { name: string }) => b.name)).toEqual([
      'example',
      'everything',
    ]);
    const forbidden = await statusAs(tokens.alice);
    expect(forbidden.status).toBe(403);
    expect(await forbidden.text()).toContain('mcp-broker.status.read');
  }, 30_000);

  it('does not show alice a tool that a list_changed added and she may not use', async () => {
    const alice = await connect('alice');
    const carol = await connect('carol');
    const before = await toolNames(alice);
    await carol.client.callTool({ name: 'example_add_tool', arguments: { name: 'perm_probe' } });
    // Carol sees it once the broker has re-listed the example server; alice never does.
    await waitFor(
      async () => (await toolNames(carol)).includes('example_perm_probe'),
      15_000,
      'carol to see the new tool',
    );
    expect(await toolNames(alice)).toEqual(before);
    expect(
      (await errorOf(alice.client.callTool({ name: 'example_perm_probe', arguments: {} }))).code,
    ).toBe(-32602);
    await carol.client.callTool({ name: 'example_remove_tool', arguments: { name: 'perm_probe' } });
  }, 30_000);

  it('tells of a list change only the clients whose permitted view it can change', async () => {
    tokens.restricted = RESTRICTED_TOKEN;
    const [alice, carol, service] = [
      await connect('alice'),
      await connect('carol'),
      await connect('restricted'),
    ];
    await Promise.all([alice, carol, service].map(c => c.eventStreamOpen));
    const aliceTools = await toolNames(alice);
    const count = (client: BrokerClient, kind: string) =>
      client.notifications.filter(m => m === `notifications/${kind}/list_changed`).length;
    const before = (kind: string) => [alice, carol, service].map(c => count(c, kind));
    const [toolsBefore, promptsBefore] = [before('tools'), before('prompts')];

    // A tool without annotations: carol and the service may use it, alice (read-only tools) not.
    example.addTool('view_probe');
    await waitFor(
      () => count(carol, 'tools') > toolsBefore[1] && count(service, 'tools') > toolsBefore[2],
      15_000,
      'carol and the service to hear of the new tool',
    );
    // The example server announces its prompts (nothing visible changes): alice and carol see
    // its prompts, the service may use no prompt at all. The marker reaches both behind the tools
    // change; a second tools change reaches the service behind the prompts announcement.
    await passMarker([alice, carol], () => example.announcePromptsChanged());
    example.addTool('view_probe_2');
    await waitFor(
      () => count(service, 'tools') > toolsBefore[2] + 1,
      15_000,
      'the service to hear of the second tool',
    );
    expect(count(alice, 'tools')).toBe(toolsBefore[0]);
    expect(count(service, 'prompts')).toBe(promptsBefore[2]);
    expect(await toolNames(alice)).toEqual(aliceTools);
    for (const name of ['view_probe', 'view_probe_2']) {
      await carol.client.callTool({ name: 'example_remove_tool', arguments: { name } });
    }
  }, 30_000);

  it('records every tool call in the audit trail (principal, server, tool, outcome, duration), never its arguments', async () => {
    const alice = await connect('alice');
    await alice.client.callTool({
      name: 'example_echo',
      arguments: { message: 'audit-secret-argument' },
    });
    await errorOf(
      alice.client.callTool({ name: 'example_add_tool', arguments: { name: 'audit_probe' } }),
    );
    const lines = await waitFor(
      () => {
        const found = toolCallAuditLines(backend.output()).filter(
          line => line.principal === 'user:default/alice',
        );
        const done =
          found.some(l => l.status === 'succeeded' && l.tool === 'echo') &&
          found.some(l => l.outcome === 'denied');
        return done ? found : undefined;
      },
      10_000,
      "alice's audit events",
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        server: 'example',
        tool: 'echo',
        status: 'succeeded',
        outcome: 'succeeded',
        durationMs: expect.any(Number),
      }),
    );
    expect(lines).toContainEqual(
      expect.objectContaining({
        server: 'example',
        tool: 'add_tool',
        status: 'failed',
        outcome: 'denied',
      }),
    );
    expect(backend.output()).not.toContain('audit-secret-argument');
  }, 30_000);

  it("limits a static token to its accessRestrictions (README's example)", async () => {
    tokens.restricted = RESTRICTED_TOKEN;
    const service = await connect('restricted');
    expect(await toolNames(service)).toContain('example_add_tool');
    expect((await service.client.listPrompts()).prompts).toEqual([]);
    expect(
      (
        await errorOf(
          service.client.getPrompt({ name: 'example_greeting', arguments: { name: 'x' } }),
        )
      ).code,
    ).toBe(-32602);
    const status = await statusAs(RESTRICTED_TOKEN);
    expect(status.status).toBe(403);
    // And nothing of other plugins.
    const catalog = await fetch(`${backend.baseUrl}/api/catalog/entities`, {
      headers: { Authorization: `Bearer ${RESTRICTED_TOKEN}` },
    });
    expect(catalog.status).toBe(403);
  }, 30_000);

  it('decides each token on its own: one subject, two tokens, different restrictions', async () => {
    tokens.restricted = RESTRICTED_TOKEN;
    tokens.unrestricted = UNRESTRICTED_TOKEN;
    // Both decided within the decision age (2 s here, 30 s by default): a decision kept per
    // subject would be shared by the second token.
    const [restricted, unrestricted] = [await connect('restricted'), await connect('unrestricted')];
    const promptNames = async (client: BrokerClient) =>
      (await client.client.listPrompts()).prompts.map(p => p.name);
    expect(await promptNames(unrestricted)).toContain('example_greeting');
    expect(await promptNames(restricted)).toEqual([]);
    expect(await promptNames(unrestricted)).toContain('example_greeting');
    expect((await statusAs(RESTRICTED_TOKEN)).status).toBe(403);
    expect((await statusAs(UNRESTRICTED_TOKEN)).status).toBe(200);
  }, 30_000);

  /**
   * Replaces the policy file in one step (a new file renamed over it): RBAC re-reads the file on
   * every change event, and an in-place write can be seen half-done (truncated, then written),
   * which RBAC may apply after the complete version.
   */
  function replaceFile(file: string, contents: string) {
    const next = `${file}.next`;
    fs.writeFileSync(next, contents);
    fs.renameSync(next, file);
  }

  it('applies a policy file edit within the decision age (no restart, no new session)', async () => {
    const alice = await connect('alice');
    expect(await toolNames(alice)).not.toContain('example_add_tool');
    const csv = path.join(policyDir, 'rbac-policy.csv');
    const original = fs.readFileSync(csv, 'utf8');
    // Alice alone becomes a portal admin too; RBAC reloads the file, the broker asks again
    // within its decision age. (mcp-user's condition would override the admin's allow, so she
    // leaves mcp-user: the RBAC 6.1.0 rule the fixture notes describe.)
    replaceFile(
      csv,
      original.replace(
        'g, user:default/alice, role:default/mcp-user',
        'g, user:default/alice, role:default/portal-admin',
      ),
    );
    try {
      await waitFor(
        async () => (await toolNames(alice)).includes('example_add_tool'),
        30_000,
        'the policy edit to take effect',
      );
      const status = await statusAs(tokens.alice);
      expect(status.status).toBe(200);
    } finally {
      replaceFile(csv, original);
    }
    await waitFor(
      async () => !(await toolNames(alice)).includes('example_add_tool'),
      30_000,
      'the policy to be restored',
    );
  }, 90_000);
});
