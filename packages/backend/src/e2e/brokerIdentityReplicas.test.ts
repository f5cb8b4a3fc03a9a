/*
 * Personal credentials across replicas (spec §11 with §6): two real backend processes on one
 * PostgreSQL database share the stored credentials — stored through one, presented by the other,
 * deleted through the other and gone from both. (A replica started with another encryption key
 * refuses to start: plugin.identity.test.ts, on one database through two plugin starts.)
 *
 * Runs only with PostgreSQL (see __testUtils__/replicas.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startWhoamiServer, type WhoamiServer } from '@internal/test-mcp-backends';
import type { BackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';
import {
  describeSkippedWithoutPostgres,
  replicaDatabase,
  startReplicas,
} from './__testUtils__/replicas';

const PURPOSE = 'personal credentials across replicas (two backends on one PostgreSQL database)';
const postgres = replicaDatabase(PURPOSE);

if (postgres === undefined) {
  describeSkippedWithoutPostgres(PURPOSE);
} else {
  describe('personal credentials on two replicas', () => {
    let replicas: BackendProcess[] = [];
    let keys: WhoamiServer;
    const clients: Client[] = [];

    beforeAll(async () => {
      keys = await startWhoamiServer({
        era: 'legacy',
        brokerToken: 'broker-own',
        apiKeys: { header: 'X-Api-Key', owners: { 'alice-key': 'alice@keys' } },
      });
      const config = {
        mcpBroker: {
          credentialEncryptionKey: randomBytes(32).toString('base64'),
          servers: [
            {
              name: 'keys',
              url: keys.url,
              headers: { Authorization: 'Bearer broker-own' },
              auth: { mode: 'userCredential', header: 'X-Api-Key' },
            },
          ],
        },
      };
      replicas = await startReplicas(postgres, config);
    }, 120_000);

    afterAll(async () => {
      await Promise.all(clients.map(c => c.close().catch(() => undefined)));
      await Promise.all(replicas.map(r => r.stop()));
      await keys?.close();
      await postgres.cleanup();
    }, 60_000);

    async function callWhoami(replica: BackendProcess, token: string) {
      const client = new Client(
        { name: 'identity-replicas', version: '1.0.0' },
        { capabilities: { elicitation: { url: {} } } },
      );
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${replica.baseUrl}/api/mcp-broker/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${token}` } },
        }),
      );
      clients.push(client);
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'keys_whoami'),
        20_000,
        'the keys server listed',
      );
      return client.callTool({ name: 'keys_whoami' }).then(
        (result: any) => JSON.parse(result.content[0].text),
        error => error,
      );
    }

    const credentials = (replica: BackendProcess, token: string, init: RequestInit = {}) =>
      fetch(`${replica.baseUrl}/api/mcp-broker/credentials/keys`, {
        ...init,
        headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      });

    it('stores through one replica, presents through the other, deletes for both', async () => {
      const alice = await replicas[0].signIn('alice');
      const stored = await credentials(replicas[0], alice, {
        method: 'PUT',
        body: JSON.stringify({ value: 'alice-key' }),
      });
      expect(stored.status).toBe(200);
      expect(await callWhoami(replicas[1], alice)).toEqual({
        principal: 'alice@keys',
        credential: 'api-key',
      });
      expect((await credentials(replicas[1], alice, { method: 'DELETE' })).status).toBe(204);
      const missing = await callWhoami(replicas[0], alice);
      expect(missing.code).toBe(-32042);
    });
  });
}
