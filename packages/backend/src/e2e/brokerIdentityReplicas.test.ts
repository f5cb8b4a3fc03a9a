/*
 * Personal credentials across replicas (spec §11 with §6): two real backend processes on one
 * PostgreSQL database share the stored credentials — stored through one, presented by the other,
 * deleted through the other and gone from both; a person's answer to a server's question, posted to
 * the replica that does not hold their backend session, reaches the server with their own
 * credential (not the broker's). (A replica started with another encryption key
 * refuses to start: plugin.identity.test.ts, on one database through two plugin starts.)
 *
 * Runs only with PostgreSQL (see __testUtils__/replicas.ts).
 */
import { randomBytes } from 'node:crypto';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
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
          sessionStore: 'database',
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

    /** A write from the person's browser: Backstage's cookie, the replica's own origin. */
    const credentials = async (replica: BackendProcess, token: string, init: RequestInit) => {
      const issued = await fetch(`${replica.baseUrl}/api/mcp-broker/.backstage/auth/v1/cookie`, {
        headers: { Authorization: `Bearer ${token}` },
      });
      const cookie = /backstage-auth=[^;]+/.exec(issued.headers.get('set-cookie') ?? '')![0];
      return fetch(`${replica.baseUrl}/api/mcp-broker/credentials/keys`, {
        ...init,
        headers: { Cookie: cookie, Origin: replica.baseUrl, 'Content-Type': 'application/json' },
      });
    };

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

    it('sends an answer posted to the replica without the person’s backend session with their credential', async () => {
      const [holder, other] = replicas;
      const alice = await holder.signIn('alice');
      const stored = await credentials(holder, alice, {
        method: 'PUT',
        body: JSON.stringify({ value: 'alice-key' }),
      });
      expect(stored.status).toBe(200);
      // The other replica's reply to the answer can arrive after the tool's result (the holder
      // streams the result as soon as the server has the answer): the statuses are awaited.
      const rerouted: Promise<number>[] = [];
      const client = new Client(
        { name: 'identity-replicas', version: '1.0.0' },
        { capabilities: { elicitation: { form: {} } } },
      );
      client.setRequestHandler(ElicitRequestSchema, async () => ({
        action: 'accept',
        content: {},
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`${holder.baseUrl}/api/mcp-broker/mcp`), {
          requestInit: { headers: { Authorization: `Bearer ${alice}` } },
          // The client's answers (JSON-RPC responses) go to the other replica; all else here.
          fetch: async (url, init) => {
            const body = typeof init?.body === 'string' ? JSON.parse(init.body) : undefined;
            if (body !== undefined && body.method === undefined && 'result' in body) {
              const answer = fetch(String(url).replace(holder.baseUrl, other.baseUrl), init);
              rerouted.push(answer.then(response => response.status));
              return answer;
            }
            return fetch(url, init);
          },
        }),
      );
      clients.push(client);
      await waitFor(
        async () => (await client.listTools()).tools.some(t => t.name === 'keys_ask'),
        20_000,
        'the keys server listed',
      );
      const before = keys.received.length;
      const result: any = await client.callTool({ name: 'keys_ask' });
      expect(JSON.parse(result.content[0].text)).toEqual({ action: 'accept' });
      expect(await Promise.all(rerouted)).toEqual([202]);
      const answers = keys.received.slice(before).filter(r => r.response);
      // (The whoami server also records every header it got: only these two fields matter here.)
      expect(answers).toEqual([expect.objectContaining({ response: true, apiKey: 'alice-key' })]);
    }, 60_000);
  });
}
