/*
 * mcpBroker.sessionStore at the plugin level (startTestBackend, mocked auth, a real SQLite
 * database through the database service): `database` migrates and records sessions there, a
 * lost database is a 503 the client may retry (never a 500 or a crash), and the default
 * `memory` leaves the database alone. Two plugin instances on one database are two replicas:
 * a client's `notifications/cancelled` POSTed to one reaches its call running on the other.
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { startRawMcpBackend } from '@internal/test-mcp-backends';
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

function post(server: Parameters<typeof request>[0], body: unknown, sessionId?: string) {
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

  it('memory (the default): creates no tables in the plugin database', async () => {
    const knex = sqlite();
    const server = await startBroker(knex);
    try {
      expect((await post(server, initialize)).status).toBe(200);
      expect(await knex.schema.hasTable('mcp_broker_client_sessions')).toBe(false);
    } finally {
      await server.stop?.();
      await knex.destroy();
    }
  });

  it('database: a notifications/cancelled POSTed to one replica cancels the call running on the other', async () => {
    const knex = sqlite();
    const raw = await startRawMcpBackend();
    const servers = [{ name: 'raw', url: raw.url }];
    const [a, b] = [
      await startBroker(knex, 'database', servers),
      await startBroker(knex, 'database', servers),
    ];
    try {
      const sessionId = (await post(a, initialize)).headers['mcp-session-id'];
      const other = (await post(b, initialize)).headers['mcp-session-id'];
      for (const [replica, session] of [
        [a, sessionId],
        [b, other],
      ] as const) {
        await waitFor(async () => {
          const list = await post(
            replica,
            { jsonrpc: '2.0', id: 2, method: 'tools/list' },
            session,
          );
          return JSON.stringify(list.body).includes('raw_wait_for_cancel');
        }, 'the raw backend listed on both replicas');
      }
      const callRequest = { name: 'raw_wait_for_cancel', arguments: {} };
      const call = post(
        a,
        { jsonrpc: '2.0', id: 'c-1', method: 'tools/call', params: callRequest },
        sessionId,
      ).then(response => response);
      const toolCall = await waitFor(
        () => raw.requests.find(r => r.method === 'tools/call'),
        'the call at the backend',
      );
      const cancel = (session: string, requestId: unknown, reason: string) =>
        post(
          b,
          {
            jsonrpc: '2.0',
            method: 'notifications/cancelled',
            params: { requestId, reason },
          },
          session,
        );
      // Another session's cancellation of the same id, and this session's of another id
      // (`"c-1"` is not `c-1`), reach nothing.
      expect((await cancel(other, 'c-1', 'other session')).status).toBe(202);
      expect((await cancel(sessionId, '"c-1"', 'other id')).status).toBe(202);
      expect((await cancel(sessionId, 'c-1', 'stop')).status).toBe(202);

      const response = await call;
      expect(response.status).toBe(200);
      expect(response.text).not.toContain('"result"');
      expect(raw.cancellations).toEqual([
        { sessionId: toolCall!.sessionId, requestId: toolCall!.id, reason: 'stop' },
      ]);
      // The row acted on is gone; the two that matched no call wait for their expiry.
      await waitFor(
        async () => (await knex('mcp_broker_cancellations')).length === 2,
        'the row acted on to go',
      );
      expect(
        (await knex('mcp_broker_cancellations').select('request_key')).map(r => r.request_key),
      ).toEqual(expect.arrayContaining(['"c-1"', '"\\"c-1\\""']));
    } finally {
      await Promise.all([a, b].map(server => server.stop?.()));
      await raw.close();
      await knex.destroy();
    }
  }, 30_000);
});
