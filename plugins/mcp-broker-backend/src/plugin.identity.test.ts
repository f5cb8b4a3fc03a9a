/*
 * The identity module's start-up at the plugin level (startTestBackend, a real SQLite database
 * through the database service): a userCredential server without an encryption key, and an
 * encryption key that does not open what is stored, fail the plugin's start with a message
 * naming the config key — never a start that presents garbage later. Without that key the
 * broker's own keys never reach the database (several replicas, which must share them, refuse to
 * start). The JWKS of the broker's subject tokens is served without authentication.
 */
import { randomBytes } from 'node:crypto';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import type { JsonObject } from '@backstage/types';
import type { Knex } from 'knex';
import { memorySqlite } from './testing/memorySqlite';
import request from 'supertest';
import { mcpBrokerPlugin } from './plugin';
import { KEY_RING_TABLE } from './store/DatabaseBrokerKeyStore';
import { migrateBrokerDatabase } from './store/migrations';

const BACKEND = 'http://localhost:7007';
const keyA = randomBytes(32).toString('base64');
const keyB = randomBytes(32).toString('base64');
const keysServer = {
  name: 'keys',
  url: 'http://127.0.0.1:9/mcp',
  auth: { mode: 'userCredential', header: 'X-Api-Key' },
};

function startBroker(knex: Knex, mcpBroker: JsonObject) {
  return startTestBackend({
    features: [
      mcpBrokerPlugin,
      mockServices.database.factory({ knex }),
      mockServices.rootConfig.factory({ data: { backend: { baseUrl: BACKEND }, mcpBroker } }),
    ],
  });
}

// Tests start the backend up to three times: allow for a loaded machine.
jest.setTimeout(60_000);

describe('the identity module at start-up (startTestBackend, real SQLite)', () => {
  let knex: Knex;
  beforeEach(() => {
    knex = memorySqlite();
  });
  afterEach(async () => {
    await knex.destroy();
  });

  it('fails loudly with a key that does not open the stored credentials, and starts with it listed as previous', async () => {
    const first = await startBroker(knex, { servers: [keysServer], credentialEncryptionKey: keyA });
    const stored = await request(first.server)
      .put('/api/mcp-broker/credentials/keys')
      .set('Origin', BACKEND) // a cookie write from the broker's page
      .set('Content-Type', 'application/json')
      .send({ value: 'alice-key' });
    expect(stored.status).toBe(200);
    await first.stop();

    const wrong = await startBroker(knex, {
      servers: [keysServer],
      credentialEncryptionKey: keyB,
    }).catch((error: Error) => error);
    expect(wrong).toBeInstanceOf(Error);
    // The broker's own keys are sealed with the same key: they are the first to be opened.
    expect((wrong as Error).message).toContain(
      'which is neither mcpBroker.credentialEncryptionKey',
    );
    expect((wrong as Error).message).not.toContain('alice-key');

    const rotated = await startBroker(knex, {
      servers: [keysServer],
      credentialEncryptionKey: keyB,
      previousCredentialEncryptionKeys: [keyA],
    });
    const listed = await request(rotated.server).get('/api/mcp-broker/credentials');
    expect(listed.body.items).toEqual([expect.objectContaining({ server: 'keys', stored: true })]);
    await rotated.stop();
  });

  it('requires a key when a configured server stores personal credentials', async () => {
    await expect(startBroker(knex, { servers: [keysServer] })).rejects.toThrow(
      'mcpBroker.credentialEncryptionKey is required: server "keys" uses auth.mode userCredential',
    );
    // A profile that registrations may name needs it just as much.
    await expect(
      startBroker(knex, {
        credentialProfiles: {
          'github-keys': { namespaces: ['team-a'], mode: 'userCredential' },
        },
      }),
    ).rejects.toThrow(
      'mcpBroker.credentialEncryptionKey is required: server "mcpBroker.credentialProfiles.github-keys" uses auth.mode userCredential',
    );
    await expect(startBroker(knex, { credentialEncryptionKey: 'too-short' })).rejects.toThrow(
      'Invalid mcpBroker.credentialEncryptionKey: must be 32 random bytes in base64',
    );
  });

  it('needs a key-encryption key to share its keys between replicas, and without one keeps none in the database', async () => {
    await expect(startBroker(knex, { sessionStore: 'database' })).rejects.toThrow(
      'mcpBroker.credentialEncryptionKey is required with mcpBroker.sessionStore: database',
    );
    // A key an earlier version left in the clear (carried into the ring by the migration).
    await migrateBrokerDatabase(knex);
    await knex(KEY_RING_TABLE).insert({
      purpose: 'request-state',
      generation: 1,
      kid: 'request-state',
      plaintext: randomBytes(32).toString('base64url'),
      created_at: 1,
      activates_at: 1,
    });
    const backend = await startBroker(knex, {});
    await backend.stop();
    expect(await knex(KEY_RING_TABLE).select()).toEqual([]);
  });

  it('serves the JWK Set of its subject tokens to anyone, public keys only', async () => {
    const backend = await startBroker(knex, {});
    const { server } = backend;
    try {
      const jwks = await request(server)
        .get('/api/mcp-broker/.well-known/jwks.json')
        .set('Authorization', mockCredentials.none.header());
      expect(jwks.status).toBe(200);
      expect(jwks.body.keys).toEqual([
        expect.objectContaining({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' }),
      ]);
      expect(jwks.body.keys[0]).not.toHaveProperty('d');
      const list = await request(server)
        .get('/api/mcp-broker/credentials')
        .set('Authorization', mockCredentials.none.header());
      expect(list.status).toBe(401);
    } finally {
      await backend.stop();
    }
  });
});
