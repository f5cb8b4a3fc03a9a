/*
 * Spec §7 in the real backend process: the broker's server list replaced through
 * APP_CONFIG_mcpBroker_servers (a JSON array), and a client that authenticates with the static
 * external-access token from the development config.
 */
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { LEGACY_INITIALIZE_REQUEST } from '../testing/mcpRawPost';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { connectBrokerClient, waitFor } from './brokerTestKit';

const DEV_STATIC_TOKEN = 'dev-only-static-token-0123456789';

describe('the MCP broker with its development configuration (real backend process)', () => {
  let example: ExampleMcpServer;
  let backend: BackendProcess;

  beforeAll(async () => {
    example = await startExampleMcpServer({ port: 0 });
    backend = await startBackendProcess({
      env: { APP_CONFIG_mcpBroker_servers: JSON.stringify([{ name: 'dev', url: example.url }]) },
    });
  }, 120_000);

  afterAll(async () => {
    await backend?.stop();
    await example?.close();
  }, 30_000);

  it('lets a browser-based MCP client on an allowed origin read the sign-in pointer and the session id', async () => {
    const origin = 'http://localhost:3000'; // the app's origin: allowed by CORS and by the broker
    const exposedBy = (response: Response) =>
      (response.headers.get('access-control-expose-headers') ?? '').toLowerCase().split(/\s*,\s*/);
    const unauthenticated = await fetch(`${backend.baseUrl}/api/mcp-broker/mcp`, {
      method: 'POST',
      headers: { Origin: origin, 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(unauthenticated.status).toBe(401);
    expect(unauthenticated.headers.get('access-control-allow-origin')).toBe(origin);
    expect(unauthenticated.headers.get('www-authenticate')).toContain('resource_metadata=');
    expect(exposedBy(unauthenticated)).toContain('www-authenticate');

    const initialized = await fetch(`${backend.baseUrl}/api/mcp-broker/mcp`, {
      method: 'POST',
      headers: {
        Origin: origin,
        Authorization: `Bearer ${DEV_STATIC_TOKEN}`,
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify(LEGACY_INITIALIZE_REQUEST),
    });
    expect(initialized.status).toBe(200);
    await initialized.body?.cancel();
    expect(initialized.headers.get('mcp-session-id')).toBeTruthy();
    expect(exposedBy(initialized)).toEqual(
      expect.arrayContaining(['mcp-session-id', 'mcp-protocol-version']),
    );
  });

  it('takes its servers from APP_CONFIG_mcpBroker_servers and serves a static-token client', async () => {
    await waitFor(
      async () => {
        const response = await fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
          headers: { Authorization: `Bearer ${DEV_STATIC_TOKEN}` },
        });
        const body = (await response.json()) as {
          backends: Array<{ name: string; state: string }>;
        };
        return (
          body.backends.length === 1 &&
          body.backends[0].name === 'dev' &&
          body.backends[0].state === 'connected'
        );
      },
      20_000,
      'the dev server to connect',
    );
    const client = await connectBrokerClient(backend.baseUrl, DEV_STATIC_TOKEN);
    try {
      const { tools } = await client.client.listTools();
      expect(tools.map(t => t.name)).toEqual(
        expect.arrayContaining(['dev_echo', 'dev_count', 'dev_confirm']),
      );
      const result = await client.client.callTool({
        name: 'dev_echo',
        arguments: { message: 'static' },
      });
      expect(result.content).toEqual([{ type: 'text', text: 'static' }]);
    } finally {
      await client.close();
    }
  }, 30_000);
});
