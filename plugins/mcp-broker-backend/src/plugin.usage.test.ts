/*
 * Usage people can see (docs/contracts/mcp-access.md §7) through the real plugin:
 * startTestBackend (auth mocked), two real example MCP servers, real SDK clients calling tools
 * through the broker, counts flushed every second and read back from GET /usage/*. The
 * permission policy is a test double (the RBAC plugin runs in packages/backend's e2e tests): for
 * `mcp-broker.usage.read` carol is ALLOWed, bob gets a CONDITIONAL IS_SERVER_OWNER decision with
 * his own ref as claim (as RBAC would pass `$ownerRefs`), everyone else DENY; every other
 * permission is allowed.
 */
import type { AddressInfo } from 'node:net';
import { coreServices, createServiceFactory } from '@backstage/backend-plugin-api';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { AuthorizeResult, type PolicyDecision } from '@backstage/plugin-permission-common';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  McpServerUsage,
  McpServerUsageList,
  MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';
import { mcpBrokerPlugin } from './plugin';
import { waitFor } from './testing/waitFor';

const USERS = ['alice', 'bob', 'carol', 'dave'] as const;
type User = (typeof USERS)[number];

/** The usage decision of the test double policy (see the file comment). */
function usageDecision(userRef: string | undefined): PolicyDecision {
  if (userRef === 'user:default/carol') return { result: AuthorizeResult.ALLOW };
  if (userRef === 'user:default/bob') {
    return {
      result: AuthorizeResult.CONDITIONAL,
      pluginId: 'mcp-broker',
      resourceType: 'mcp-broker-server',
      conditions: {
        rule: 'IS_SERVER_OWNER',
        resourceType: 'mcp-broker-server',
        params: { claims: ['user:default/bob'] },
      },
    };
  }
  return { result: AuthorizeResult.DENY };
}

describe('usage through the broker (startTestBackend, real example servers, test double policy)', () => {
  let servers: Record<'a' | 'b', ExampleMcpServer>;
  let http: Awaited<ReturnType<typeof startTestBackend>>['server'];
  let base: string;
  const clients: Client[] = [];
  /** How the calls made in beforeAll that should not succeed ended. */
  const outcomes: string[] = [];
  const outcomeOf = (call: Promise<Record<string, unknown>>) =>
    call.then(
      result => (result.isError === true ? 'error result' : 'succeeded'),
      error => String(error),
    );

  const header = (user: User) => mockCredentials.user.header(`user:default/${user}`);
  const get = (path: string, user: User | 'service') =>
    fetch(`${base}${path}`, {
      headers: {
        Authorization: user === 'service' ? mockCredentials.service.header() : header(user),
      },
    });
  const json = async <T>(path: string, user: User): Promise<T> => {
    const response = await get(path, user);
    expect(response.status).toBe(200);
    return (await response.json()) as T;
  };
  const connect = async (user: User) => {
    const client = new Client({ name: `usage-${user}`, version: '1.0.0' });
    clients.push(client);
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
        requestInit: { headers: { Authorization: header(user) } },
      }),
    );
    await waitFor(
      async () => (await client.listTools()).tools.some(t => t.name === 'b_echo'),
      'the broker to list both servers',
    );
    return client;
  };

  beforeAll(async () => {
    servers = {
      a: await startExampleMcpServer({ port: 0 }),
      b: await startExampleMcpServer({ port: 0 }),
    };
    const allowAll = mockServices.permissions();
    ({ server: http } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [
                { name: 'a', url: servers.a.url, owner: 'group:default/payments-team' },
                { name: 'b', url: servers.b.url, owner: 'user:default/bob' },
              ],
              rateLimits: { overrides: [{ server: 'b', calls: 1, per: { hours: 1 } }] },
              usage: { flushInterval: { seconds: 1 }, retention: { days: 30 } },
            },
          },
        }),
        createServiceFactory({
          service: coreServices.permissions,
          deps: {},
          factory: () => ({
            authorize: (requests: any, options: any) => allowAll.authorize(requests, options),
            authorizeConditional: async (requests: any[], options: any) => {
              const allowed = await allowAll.authorizeConditional(requests, options);
              return requests.map((request, i) =>
                request.permission.name === 'mcp-broker.usage.read'
                  ? usageDecision(options.credentials.principal.userEntityRef)
                  : allowed[i],
              );
            },
          }),
        }),
      ],
    }));
    base = `http://127.0.0.1:${(http.address() as AddressInfo).port}/api/mcp-broker`;

    // alice: 3 echo calls on a, one of them failing (no message); an unknown tool (not counted).
    const alice = await connect('alice');
    await alice.callTool({ name: 'a_echo', arguments: { message: 'one' } });
    await alice.callTool({ name: 'a_echo', arguments: { message: 'two' } });
    outcomes.push(await outcomeOf(alice.callTool({ name: 'a_echo', arguments: {} })));
    outcomes.push(await outcomeOf(alice.callTool({ name: 'a_nope', arguments: {} })));
    // dave: one call on a, two on b — the second refused by b's limit of 1 an hour.
    const dave = await connect('dave');
    await dave.callTool({ name: 'a_echo', arguments: { message: 'x' } });
    await dave.callTool({ name: 'b_echo', arguments: { message: 'x' } });
    outcomes.push(await outcomeOf(dave.callTool({ name: 'b_echo', arguments: { message: 'y' } })));
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close()));
    await http?.stop?.();
    await Promise.all(Object.values(servers ?? {}).map(s => s.close()));
  });

  it('made one failing call, one of an unknown tool and one over the limit', () => {
    expect(outcomes[0]).toMatch(/error result|Error/);
    expect(outcomes[1]).toMatch(/unknown tool/);
    expect(outcomes[2]).toMatch(/Rate limit reached/);
  });

  it('shows a person their own calls, errors and refusals per day, server and tool, once flushed', async () => {
    const mine = await waitFor<MyMcpUsage | undefined>(async () => {
      // Flushes may split her calls: wait for the last one, then check the whole answer.
      const usage = await json<MyMcpUsage>('/usage/my', 'alice');
      return usage.days.some(day => day.calls === 3) ? usage : undefined;
    }, "alice's three calls to be flushed");
    const today = new Date().toISOString().slice(0, 10);
    expect(mine).toMatchObject({ subject: 'user:default/alice', to: today, grants: [] });
    expect(mine!.days).toEqual([
      { day: today, server: 'a', tool: 'echo', calls: 3, errors: 1, rateLimited: 0 },
    ]);
    const daves = await waitFor<MyMcpUsage | undefined>(async () => {
      const usage = await json<MyMcpUsage>('/usage/my?days=7&server=b', 'dave');
      return usage.days.some(day => day.rateLimited === 1) ? usage : undefined;
    }, "dave's refused call to be flushed");
    expect(daves!.days).toEqual([
      { day: today, server: 'b', tool: 'echo', calls: 1, errors: 0, rateLimited: 1 },
    ]);
  });

  it('refuses /usage/my to a service, with a message saying why', async () => {
    const response = await get('/usage/my', 'service');
    expect(response.status).toBe(403);
    expect((await response.json()).error.message).toMatch(/signed-in person.*Sign in as a user/);
  });

  it('lists every server to an admin, the owned ones to an owner, and refuses others naming the permission', async () => {
    await waitFor(async () => {
      const list = await json<McpServerUsageList>('/usage/servers', 'carol');
      return list.servers.find(s => s.server === 'b')?.rateLimited === 1;
    }, 'the usage of b to be flushed');
    const all = await json<McpServerUsageList>('/usage/servers', 'carol');
    expect(all.servers).toEqual([
      {
        server: 'a',
        owner: 'group:default/payments-team',
        calls: 4,
        errors: 1,
        rateLimited: 0,
        people: 2,
      },
      { server: 'b', owner: 'user:default/bob', calls: 1, errors: 0, rateLimited: 1, people: 1 },
    ]);
    const owned = await json<McpServerUsageList>('/usage/servers', 'bob');
    expect(owned.servers.map(s => s.server)).toEqual(['b']);
    const denied = await get('/usage/servers', 'alice');
    expect(denied.status).toBe(403);
    expect((await denied.json()).error.message).toContain('mcp-broker.usage.read');
  });

  it("shows a server's series and people to its owner and admins only, paged by calls", async () => {
    await waitFor(async () => {
      const usage = await json<McpServerUsage>('/usage/servers/a', 'carol');
      return usage.people.length === 2;
    }, 'both people of a');
    const first = await json<McpServerUsage>('/usage/servers/a?days=7&limit=1', 'carol');
    expect(first.series).toEqual([
      expect.objectContaining({ tool: 'echo', calls: 4, errors: 1, rateLimited: 0 }),
    ]);
    expect(first.people).toEqual([
      expect.objectContaining({ principal: 'user:default/alice', calls: 3, errors: 1, grants: [] }),
    ]);
    const token = first.metadata.continue!;
    expect(token).toEqual(expect.any(String));
    const second = await json<McpServerUsage>(
      `/usage/servers/a?days=7&limit=1&continue=${encodeURIComponent(token)}`,
      'carol',
    );
    expect(second.people.map(p => p.principal)).toEqual(['user:default/dave']);
    expect(second.metadata).toEqual({});
    // A token is bound to the query and the caller.
    for (const [path, user] of [
      [`/usage/servers/a?days=8&limit=1&continue=${encodeURIComponent(token)}`, 'carol'],
      [`/usage/servers/b?days=7&limit=1&continue=${encodeURIComponent(token)}`, 'bob'],
    ] as const) {
      const response = await get(path, user);
      expect(response.status).toBe(400);
      expect((await response.json()).error.message).toMatch(/Invalid continue token/);
    }
    // Owner of b, not of a: a is forbidden (servers are no secret), b is his.
    expect((await get('/usage/servers/a', 'bob')).status).toBe(403);
    expect((await json<McpServerUsage>('/usage/servers/b', 'bob')).owner).toBe('user:default/bob');
    const unknown = await get('/usage/servers/nope', 'carol');
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toContain('no server "nope"');
  });

  it.each([
    ['/usage/my?days=0', /days must be a whole number from 1 to 400/],
    ['/usage/my?days=abc', /days must be a whole number from 1 to 400/],
    ['/usage/my?days=1&days=2', /days must be given once/],
    ['/usage/my?server=Not_A_Server', /server must be a server name/],
    ['/usage/servers?since=2026-01-01', /unknown query parameter "since" \(allowed: days\)/],
    ['/usage/servers/a?limit=1001', /limit must be a whole number from 1 to 1000/],
    ['/usage/servers/a?continue=forged.token', /Invalid continue token/],
  ])('answers %s with 400 saying what to fix', async (path, message) => {
    const response = await get(path, 'carol');
    expect(response.status).toBe(400);
    expect((await response.json()).error).toMatchObject({
      name: 'InputError',
      message: expect.stringMatching(message),
    });
  });
});
