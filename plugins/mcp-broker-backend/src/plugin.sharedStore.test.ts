/*
 * mcpBroker.sessionStore at the plugin level (startTestBackend, mocked auth, a real SQLite
 * database through the database service): `database` migrates and records sessions there, a
 * lost database is a 503 the client may retry (never a 500 or a crash), and the default
 * `memory` leaves the database alone.
 */
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import knexFactory, { Knex } from 'knex';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { initializeRequest } from './testing/initializeRequest';

function sqlite(): Knex {
  return knexFactory({
    client: 'better-sqlite3',
    connection: { filename: ':memory:' },
    useNullAsDefault: true,
  });
}

async function startBroker(knex: Knex, sessionStore?: string) {
  const { server } = await startTestBackend({
    features: [
      mcpBrokerPlugin,
      mockServices.database.factory({ knex }),
      mockServices.rootConfig.factory({
        data: { mcpBroker: { servers: [], ...(sessionStore && { sessionStore }) } },
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
});
