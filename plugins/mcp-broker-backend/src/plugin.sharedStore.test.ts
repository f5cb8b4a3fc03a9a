/*
 * mcpBroker.sessionStore at the plugin level (startTestBackend, mocked auth, a real SQLite
 * database through the database service): `database` migrates and records sessions there, a
 * lost database is a 503 the client may retry (never a 500 or a crash), and the default
 * `memory` leaves the database alone. Two plugin instances on one database are two replicas:
 * a client's `notifications/cancelled` POSTed to one reaches its call running on the other.
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import knexFactory, { Knex } from 'knex';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { initializeRequest } from './testing/initializeRequest';
import { waitFor } from './testing/waitFor';

function sqlite(): Knex {
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: ':memory:' },
    useNullAsDefault: true,
  });
}

async function startBroker(
  knex: Knex,
  sessionStore?: string,
  servers: Array<{ name: string; url: string }> = [],
) {
  const { server } = await startTestBackend({
    features: [
      mcpBrokerPlugin,
      mockServices.database.factory({ knex }),
      mockServices.rootConfig.factory({
        data: { mcpBroker: { servers, ...(sessionStore && { sessionStore }) } },
      }),
    ],
  });
  return server;
}

const initialize = initializeRequest({ capabilities: { elicitation: {} } });

type Server = Awaited<ReturnType<typeof startBroker>>;

function post(server: Server, body: unknown, sessionId?: string) {
  const call = request(server)
    .post('/api/mcp-broker/mcp')
    .set('Content-Type', 'application/json')
    .set('Accept', 'application/json, text/event-stream');
  if (sessionId !== undefined) call.set('Mcp-Session-Id', sessionId);
  return call.send(JSON.stringify(body));
}

describe('mcpBroker.sessionStore (startTestBackend, real SQLite)', () => {
  it('database: records sessions in the plugin database and answers 503 while it is unreachable', async () => {
    const knex = sqlite();
    const server = await startBroker(knex, 'database');
    try {
      const init = await post(server, initialize);
      expect(init.status).toBe(200);
      const sessionId = init.headers['mcp-session-id'];
      const rows = await knex('mcp_broker_client_sessions').where('id', sessionId);
      expect(rows).toEqual([
        expect.objectContaining({
          principal: 'user:user:default/mock',
          protocol_version: '2025-11-25',
          client_capabilities: '{"elicitation":{}}',
        }),
      ]);
      expect(
        (await post(server, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId)).status,
      ).toBe(200);

      await knex.destroy();
      const lost = await post(server, { jsonrpc: '2.0', id: 3, method: 'tools/list' }, sessionId);
      expect(lost.status).toBe(503);
      expect(lost.body).toMatchObject({
        jsonrpc: '2.0',
        error: { message: expect.stringContaining('retry') },
      });
      const answer = await post(
        server,
        { jsonrpc: '2.0', id: 'raw:AAAAAAAAAAAAAAAAAAAAAA', result: {} },
        sessionId,
      );
      expect(answer.status).toBe(503);
      const again = await post(server, initialize);
      expect(again.status).toBe(503);
      expect(again.body).toMatchObject({
        jsonrpc: '2.0',
        id: 1,
        error: { message: expect.any(String) },
      });
    } finally {
      await server.stop?.();
    }
  });

  it('memory (the default): keeps sessions out of the plugin database', async () => {
    const knex = sqlite();
    const server = await startBroker(knex);
    try {
      expect((await post(server, initialize)).status).toBe(200);
      // The database is migrated whatever the session store (personal credentials live there,
      // spec §11), but a session of the memory store never reaches it.
      expect(await knex('mcp_broker_client_sessions').count({ n: '*' })).toEqual([{ n: 0 }]);
    } finally {
      await server.stop?.();
      await knex.destroy();
    }
  });
});

describe('two replicas on one database (two plugin instances, real SQLite, the raw backend)', () => {
  let knex: Knex;
  let raw: RawMcpBackend;
  let a: Server;
  let b: Server;
  beforeEach(async () => {
    knex = sqlite();
    raw = await startRawMcpBackend();
    const servers = [{ name: 'raw', url: raw.url }];
    a = await startBroker(knex, 'database', servers);
    b = await startBroker(knex, 'database', servers);
  });
  afterEach(async () => {
    await Promise.all([a, b].map(server => server.stop?.()));
    await raw.close();
    await knex.destroy();
  });

  /** A session initialized on `replica`, once the raw backend is listed there. */
  async function sessionOn(replica: Server): Promise<string> {
    const sessionId = (await post(replica, initialize)).headers['mcp-session-id'];
    await waitFor(async () => {
      const list = await post(replica, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sessionId);
      return JSON.stringify(list.body).includes('raw_wait_for_cancel');
    }, 'the raw backend listed');
    return sessionId;
  }

  /** Starts `raw_wait_for_cancel` on `replica`; resolves once the backend runs it. */
  async function startCall(replica: Server, sessionId: string, id: string) {
    const params = { name: 'raw_wait_for_cancel', arguments: {} };
    const before = raw.requests.length;
    const response = post(replica, { jsonrpc: '2.0', id, method: 'tools/call', params }, sessionId)
      // Started now (supertest sends on then); resolves when the call's stream ends.
      .then(ended => ended);
    const atBackend = await waitFor(
      () => raw.requests.slice(before).find(r => r.method === 'tools/call'),
      'the call at the backend',
    );
    const cancellations = () =>
      raw.cancellations.filter(
        c => c.sessionId === atBackend!.sessionId && c.requestId === atBackend!.id,
      );
    return { response, cancellations };
  }

  it('a notifications/cancelled POSTed to one replica cancels the call running on the other', async () => {
    const sessionId = await sessionOn(a);
    const other = await sessionOn(b);
    const call = await startCall(a, sessionId, 'c-1');
    const cancel = (session: string, requestId: unknown, reason: string) =>
      post(
        b,
        { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason } },
        session,
      );
    // Another session's cancellation of the same id, and this session's of another id
    // (`"c-1"` is not `c-1`), reach nothing.
    expect((await cancel(other, 'c-1', 'other session')).status).toBe(202);
    expect((await cancel(sessionId, '"c-1"', 'other id')).status).toBe(202);
    expect((await cancel(sessionId, 'c-1', 'stop')).status).toBe(202);

    const response = await call.response;
    expect(response.status).toBe(200);
    expect(response.text).not.toContain('"result"');
    expect(call.cancellations()).toEqual([expect.objectContaining({ reason: 'stop' })]);
    expect(raw.cancellations).toHaveLength(1);
    // The signal acted on is gone; the two that matched no call wait for their expiry.
    const cancellations = () => knex('mcp_broker_signals').where({ kind: 'cancel' });
    await waitFor(async () => (await cancellations()).length === 2, 'the signal acted on to go');
    expect(
      (await cancellations().select('payload')).map(r => JSON.parse(r.payload).requestKey),
    ).toEqual(expect.arrayContaining(['"c-1"', '"\\"c-1\\""']));
  }, 30_000);

  it('a DELETE of the session on one replica ends its call on the other before any sweep', async () => {
    // The session sweep runs every minute here (sessionIdleTimeout: 1 hour): only the signal
    // between the replicas can end the call within waitFor's time.
    const sessionId = await sessionOn(a);
    const call = await startCall(a, sessionId, 'c-2');
    const deleted = await request(b).delete('/api/mcp-broker/mcp').set('Mcp-Session-Id', sessionId);
    expect(deleted.status).toBe(204);
    await waitFor(() => call.cancellations().length > 0, 'the call cancelled at the backend');
    expect(call.cancellations()).toEqual([
      expect.objectContaining({ reason: 'the client disconnected' }),
    ]);
    const response = await call.response;
    expect(response.text).not.toContain('"result"');
  }, 30_000);
});
