/*
 * mcpBroker.sessionStore at the plugin level (startTestBackend, mocked auth, a real SQLite
 * database through the database service): `database` migrates and records sessions there, a
 * lost database is a 503 the client may retry (never a 500 or a crash), and the default
 * `memory` leaves the database alone. Two plugin instances on one database are two replicas:
 * a client's `notifications/cancelled` POSTed to one reaches its call running on the other.
 * On SQLite and PostgreSQL: a client flooding `notifications/cancelled` for calls that run
 * nowhere cannot grow the bus's table past its bound per session.
 */
import { randomBytes } from 'node:crypto';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import type { Knex } from 'knex';
import { memorySqlite } from './testing/memorySqlite';
import request from 'supertest';
import { MAX_PENDING_CANCELLATIONS_PER_SESSION } from './calls/SessionCancellations';
import { mcpBrokerPlugin } from './plugin';
import { sessionAddress } from './replicas/SignalBus';
import { SIGNALS_TABLE } from './store/DatabaseSignalStore';
import { replicaDatabaseForSuite, replicaDatabases } from './store/__testUtils__/replicaDatabases';
import { initializeRequest } from './testing/initializeRequest';
import { waitFor } from './testing/waitFor';

const sqlite = memorySqlite;

const SHARED_KEY = randomBytes(32).toString('base64');

/** A broker plugin instance (a replica) on `knex`: the whole test backend, to stop it. */
function startBrokerBackend(
  knex: Knex,
  sessionStore?: string,
  servers: Array<{ name: string; url: string }> = [],
) {
  return startTestBackend({
    features: [
      mcpBrokerPlugin,
      mockServices.database.factory({ knex }),
      mockServices.rootConfig.factory({
        data: {
          mcpBroker: {
            servers,
            // Replicas share the broker's keys, kept in the database sealed with this key.
            ...(sessionStore && { sessionStore, credentialEncryptionKey: SHARED_KEY }),
          },
        },
      }),
    ],
  });
}

/** A replica's HTTP server (stopping it stops the server, not the plugin). */
async function startBroker(
  knex: Knex,
  sessionStore?: string,
  servers: Array<{ name: string; url: string }> = [],
) {
  return (await startBrokerBackend(knex, sessionStore, servers)).server;
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

  it('a replica that begins to drain ends its GET streams, lease given up first, while its calls still run', async () => {
    // A third replica, stopped as a whole (plugin shutdown: the drain), as SIGTERM would.
    const draining = await startBrokerBackend(knex, 'database', [{ name: 'raw', url: raw.url }]);
    const c = draining.server;
    const sessionId = await sessionOn(c);
    const urlOf = (replica: Server) => {
      const { port } = replica.address() as { port: number };
      return `http://127.0.0.1:${port}/api/mcp-broker/mcp`;
    };
    const get = (replica: Server) =>
      fetch(urlOf(replica), {
        headers: {
          Accept: 'text/event-stream',
          'Mcp-Session-Id': sessionId,
          'Mcp-Protocol-Version': '2025-11-25',
        },
      });
    const stream = await get(c);
    expect(stream.status).toBe(200);
    let streamEnded = false;
    void (async () => {
      for await (const _chunk of stream.body as unknown as AsyncIterable<Uint8Array>) {
        // keep-alives
      }
    })()
      .catch(() => undefined)
      .finally(() => {
        streamEnded = true;
      });
    const refused = await get(b);
    expect(refused.status).toBe(409);
    await refused.arrayBuffer();

    const call = await startCall(c, sessionId, 'c-3');
    let callAnswered = false;
    void call.response.then(() => {
      callAnswered = true;
    });
    const stopping = draining.stop();
    await waitFor(() => streamEnded, 'the GET stream on the draining replica to end');
    // The call still drains there; the session's stream opens on the other replica at once.
    expect(callAnswered).toBe(false);
    const reopened = await get(b);
    expect(reopened.status).toBe(200);
    await reopened.body?.cancel();
    await stopping;
    expect((await call.response).text).toContain('shutting down');
  }, 60_000);

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

const { engines } = replicaDatabases('cancellation flood tests');

describe.each(engines)('a client flooding notifications/cancelled on $label', engine => {
  const knexes = replicaDatabaseForSuite(engine);

  it('cannot grow the signal table past the bound per session, whatever ids it names and however fast', async () => {
    const server = await startBroker(knexes[0], 'database');
    try {
      const sessions: string[] = [];
      for (let i = 0; i < 2; i += 1) {
        sessions.push((await post(server, initialize)).headers['mcp-session-id']);
      }
      const cancel = (sessionId: string, requestId: string | number) =>
        post(
          server,
          { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId, reason: 'x' } },
          sessionId,
        );
      // All at once (concurrent senders are what could slip past a count-then-insert): made-up
      // ids, and one id over and over. No call runs anywhere, so every one is relayed.
      const flood = sessions.flatMap(sessionId => [
        ...Array.from({ length: 60 }, (_, i) => cancel(sessionId, `made-up-${i}`)),
        ...Array.from({ length: 40 }, () => cancel(sessionId, 7)),
      ]);
      const answers = await Promise.all(flood);
      expect(new Set(answers.map(answer => answer.status))).toEqual(new Set([202]));

      const rowsOf = async (sessionId: string) =>
        (await knexes[1](SIGNALS_TABLE).where({ address: sessionAddress(sessionId) })).length;
      // Each session holds exactly the bound (its calls could still need them); one client's
      // sessions are limited by sessionLimits.perPrincipal, so the client's rows are too.
      for (const sessionId of sessions) {
        expect(await rowsOf(sessionId)).toBe(MAX_PENDING_CANCELLATIONS_PER_SESSION);
      }
      // A later burst of the same still adds nothing.
      await Promise.all(Array.from({ length: 20 }, (_, i) => cancel(sessions[0], `later-${i}`)));
      expect(await rowsOf(sessions[0])).toBe(MAX_PENDING_CANCELLATIONS_PER_SESSION);
    } finally {
      await server.stop?.();
    }
  }, 60_000);
});
