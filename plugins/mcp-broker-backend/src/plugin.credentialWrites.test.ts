/*
 * Who may change a stored personal credential (spec §11.1), at the plugin level (startTestBackend,
 * real SQLite): the person's browser — Backstage's cookie (here: the mock auth's request without
 * an Authorization header) with the backend's or the app's Origin. Bearer tokens only list,
 * unless `mcpBroker.credentials.allowServiceWrites` lets service principals write; a user's
 * token never writes. The same rules on the real backend: packages/backend brokerIdentity.test.ts.
 */
import { randomBytes } from 'node:crypto';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { memorySqlite } from './testing/memorySqlite';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';

const BACKEND = 'http://localhost:7007';
const APP = 'http://localhost:3000';
const PATH = '/api/mcp-broker/credentials/keys';

// Each test starts a backend: allow for a loaded machine.
jest.setTimeout(60_000);

describe('writes of personal credentials (startTestBackend, real SQLite)', () => {
  let knex: Knex;
  let backend: Awaited<ReturnType<typeof startTestBackend>> | undefined;

  async function start(credentials: JsonObject = {}) {
    backend = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        mockServices.database.factory({ knex }),
        mockServices.rootConfig.factory({
          data: {
            app: { baseUrl: APP },
            backend: { baseUrl: BACKEND },
            mcpBroker: {
              credentialEncryptionKey: randomBytes(32).toString('base64'),
              credentials,
              servers: [
                {
                  name: 'keys',
                  url: 'http://127.0.0.1:9/mcp',
                  auth: { mode: 'userCredential', header: 'X-Api-Key' },
                },
              ],
            },
          },
        }),
      ],
    });
    return backend.server;
  }

  beforeEach(() => {
    knex = memorySqlite();
  });
  afterEach(async () => {
    await backend?.stop();
    backend = undefined;
    await knex.destroy();
  });

  const put = (server: Awaited<ReturnType<typeof start>>) =>
    request(server).put(PATH).set('Content-Type', 'application/json');

  it('stores and deletes from the backend’s and the app’s origin with the cookie', async () => {
    const server = await start();
    expect((await put(server).set('Origin', BACKEND).send({ value: 'k1' })).status).toBe(200);
    expect((await put(server).set('Origin', APP).send({ value: 'k2' })).status).toBe(200);
    expect((await request(server).delete(PATH).set('Origin', APP)).status).toBe(204);
  });

  it('refuses a cookie write without an Origin, or from another origin', async () => {
    const server = await start();
    const bare = await put(server).send({ value: 'k1' });
    expect(bare.status).toBe(403);
    expect(bare.body.error.message).toContain('this request has none');
    expect(bare.body.error.message).toMatch(
      /Open http:\/\/localhost:\d+\/api\/mcp-broker\/connect\/keys$/,
    );
    const foreign = await request(server).delete(PATH).set('Origin', 'https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.body.error.message).toContain('https://evil.example may not change credentials');
  });

  it('refuses bearer writes, naming the page, and still lists with a token', async () => {
    const server = await start();
    for (const header of [mockCredentials.user.header(), mockCredentials.service.header()]) {
      const stored = await put(server)
        .set('Authorization', header)
        .set('Origin', BACKEND)
        .send({ value: 'k1' });
      expect(stored.status).toBe(403);
      expect(stored.body.error.message).toMatch(
        /^A token cannot change personal credentials .* store or delete it in your browser at http:\/\/localhost:\d+\/api\/mcp-broker\/connect\/keys$/,
      );
      const deleted = await request(server).delete(PATH).set('Authorization', header);
      expect(deleted.status).toBe(403);
    }
    const listed = await request(server)
      .get('/api/mcp-broker/credentials')
      .set('Authorization', mockCredentials.user.header());
    expect(listed.status).toBe(200);
    expect(listed.body.items).toEqual([{ server: 'keys', stored: false, inUse: true }]);
  });

  it('lets service principals write with their token when enabled, never a user’s token', async () => {
    const server = await start({ allowServiceWrites: true });
    const service = await put(server)
      .set('Authorization', mockCredentials.service.header())
      .send({ value: 'service-key' });
    expect(service.status).toBe(200);
    const user = await put(server)
      .set('Authorization', mockCredentials.user.header())
      .send({ value: 'k1' });
    expect(user.status).toBe(403);
    const listed = await request(server)
      .get('/api/mcp-broker/credentials')
      .set('Authorization', mockCredentials.service.header());
    expect(listed.body.items).toEqual([expect.objectContaining({ server: 'keys', stored: true })]);
  });
});
