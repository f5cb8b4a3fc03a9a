/*
 * The modern example server with the official SDK v2 client pinned to 2026-07-28: its `deploy`
 * tool asks through `input_required` (docs/contracts/mcp-access.md §9), which the client turns
 * into an `elicitation/create` request to its handler and a retry with the answer.
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { ModernExampleMcpServer, startModernExampleMcpServer } from './modernServer';

describe('the modern example MCP server (official SDK v2 client, 2026-07-28)', () => {
  let server: ModernExampleMcpServer;
  const clients: ModernClient[] = [];

  beforeAll(async () => {
    server = await startModernExampleMcpServer({ port: 0 });
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await server.close();
  });

  async function connect(action: 'accept' | 'decline' | 'cancel', asked: string[]) {
    const client = new ModernClient(
      { name: 'modern-test', version: '1.0.0' },
      { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    client.setRequestHandler('elicitation/create', async request => {
      asked.push(request.params.message);
      return action === 'accept'
        ? { action, content: { confirmed: true } }
        : { action: action as 'decline' | 'cancel' };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(client);
    return client;
  }

  it('deploys on accept and cancels otherwise, asking "Deploy <target>?"', async () => {
    const asked: string[] = [];
    const accepting = await connect('accept', asked);
    expect(accepting.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const deployed = await accepting.callTool({
      name: 'deploy',
      arguments: { target: 'staging' },
    });
    expect(deployed.content).toEqual([{ type: 'text', text: 'deployed staging' }]);
    for (const action of ['decline', 'cancel'] as const) {
      const refusing = await connect(action, asked);
      const result = await refusing.callTool({
        name: 'deploy',
        arguments: { target: 'production' },
      });
      expect(result.content).toEqual([{ type: 'text', text: 'cancelled' }]);
    }
    expect(asked).toEqual(['Deploy staging?', 'Deploy production?', 'Deploy production?']);
  });

  it('lists deploy as destructive, not read-only', async () => {
    const client = await connect('accept', []);
    const { tools } = await client.listTools();
    const deploy = tools.find(tool => tool.name === 'deploy');
    expect(deploy?.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(deploy?.inputSchema).toMatchObject({ required: ['target'] });
  });
});
