/*
 * Stored personal credentials are bound to the server's identity, not only its name (spec
 * §11.1), in the real backend process: a `userCredential` server is removed from the config file
 * (which the running broker reloads) and another server, on another host, is added under the same
 * name. The person is asked to store a credential again, and the credential they stored for the
 * old server never reaches the new one. Both servers are real whoami MCP servers that report the
 * key they received; the credential is stored from the person's browser (cookie and Origin).
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { startWhoamiServer, type WhoamiServer } from '@internal/test-mcp-backends';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { waitFor } from './brokerTestKit';

const BROKER_TOKEN = 'broker-own-token';

describe('personal credentials bound to the server’s identity (real backend process)', () => {
  let backend: BackendProcess;
  let oldServer: WhoamiServer;
  let newServer: WhoamiServer;
  let dir: string;
  let brokerFile: string;
  let alice: string;
  const owners: Record<string, string> = {
    'alice-old-key': 'alice@old',
    'alice-new-key': 'alice@new',
  };
  const clients: Client[] = [];
  const key = randomBytes(32).toString('base64');

  /** Replaces the broker's config (the file the running backend reloads). */
  const writeServers = (servers: Array<{ name: string; url: string }>) => {
    const temporary = `${brokerFile}.tmp`;
    const entries = servers.map(s => ({
      ...s,
      headers: { Authorization: `Bearer ${BROKER_TOKEN}` },
      auth: { mode: 'userCredential', header: 'X-Api-Key' },
    }));
    fs.writeFileSync(temporary, JSON.stringify({ credentialEncryptionKey: key, servers: entries }));
    fs.renameSync(temporary, brokerFile);
  };

  beforeAll(async () => {
    oldServer = await startWhoamiServer({
      era: 'legacy',
      brokerToken: BROKER_TOKEN,
      apiKeys: { header: 'X-Api-Key', owners },
    });
    newServer = await startWhoamiServer({
      era: 'legacy',
      brokerToken: BROKER_TOKEN,
      apiKeys: { header: 'X-Api-Key', owners },
    });
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'broker-binding-'));
    brokerFile = path.join(dir, 'mcp-broker.json');
    writeServers([{ name: 'keys', url: oldServer.url }]);
    backend = await startBackendProcess({
      config: { mcpBroker: { $include: brokerFile } },
      startTimeoutMs: 200_000,
    });
    alice = await backend.signIn('alice');
  }, 240_000);

  afterAll(async () => {
    await Promise.all(clients.map(c => c.close().catch(() => undefined)));
    await backend?.stop();
    await Promise.all([oldServer?.close(), newServer?.close()]);
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  }, 30_000);

  async function connect(): Promise<Client> {
    const client = new Client(
      { name: 'binding-e2e', version: '1.0.0' },
      { capabilities: { elicitation: { url: {} } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${alice}` } },
      }),
    );
    clients.push(client);
    return client;
  }

  /** Stores alice's credential as her browser does on the broker's page. */
  async function storeFromBrowser(value: string) {
    const issued = await fetch(`${backend.baseUrl}/api/mcp-broker/.backstage/auth/v1/cookie`, {
      headers: { Authorization: `Bearer ${alice}` },
    });
    const cookie = /backstage-auth=[^;]+/.exec(issued.headers.get('set-cookie') ?? '')![0];
    const stored = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials/keys`, {
      method: 'PUT',
      headers: { Cookie: cookie, Origin: backend.baseUrl, 'Content-Type': 'application/json' },
      body: JSON.stringify({ value }),
    });
    expect(stored.status).toBe(200);
  }

  async function listed(): Promise<Array<Record<string, unknown>>> {
    const response = await fetch(`${backend.baseUrl}/api/mcp-broker/credentials`, {
      headers: { Authorization: `Bearer ${alice}` },
    });
    return (await response.json()).items;
  }

  const whoamiTool = async (client: Client) =>
    (await client.listTools()).tools.some(t => t.name === 'keys_whoami');
  const received = (server: WhoamiServer) =>
    server.received.filter(r => r.method === 'tools/call').map(r => r.apiKey);

  it('asks again for a new server under a removed server’s name, and never presents the old credential to it', async () => {
    const first = await connect();
    await waitFor(() => whoamiTool(first), 30_000, 'the first keys server listed');
    await storeFromBrowser('alice-old-key');
    const before: any = await first.callTool({ name: 'keys_whoami' });
    expect(JSON.parse(before.content[0].text)).toEqual({
      principal: 'alice@old',
      credential: 'api-key',
    });

    // The server is removed, then another one (another host) takes its name.
    writeServers([]);
    await waitFor(async () => !(await whoamiTool(first)), 30_000, 'the first keys server gone');
    writeServers([{ name: 'keys', url: newServer.url }]);
    const second = await connect();
    await waitFor(() => whoamiTool(second), 30_000, 'the new keys server listed');

    expect(await listed()).toEqual([{ server: 'keys', stored: false, inUse: true }]);
    const asked = await second.callTool({ name: 'keys_whoami' }).catch(error => error);
    expect(asked).toBeInstanceOf(McpError);
    expect(asked.code).toBe(-32042);
    expect(asked.data.elicitations[0].url).toContain('/api/mcp-broker/connect/keys');
    expect(received(newServer)).toEqual([]);

    await storeFromBrowser('alice-new-key');
    const after: any = await second.callTool({ name: 'keys_whoami' });
    expect(JSON.parse(after.content[0].text)).toEqual({
      principal: 'alice@new',
      credential: 'api-key',
    });
    expect(received(newServer)).toEqual(['alice-new-key']);
    expect(received(oldServer)).toEqual(['alice-old-key']);
  }, 120_000);
});
