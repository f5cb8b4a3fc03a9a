import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  PromptListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ExampleMcpServer, startExampleMcpServer } from './server';

describe('the example MCP server (official SDK client)', () => {
  let server: ExampleMcpServer;
  const clients: Client[] = [];

  async function connect(capabilities = {}) {
    const client = new Client({ name: 'test', version: '1.0.0' }, { capabilities });
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
    clients.push(client);
    return client;
  }

  beforeEach(async () => {
    server = await startExampleMcpServer({ port: 0 });
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map(c => c.close()));
    await server.close();
  });

  it('reports progress with the caller’s token, in order', async () => {
    const client = await connect();
    const progress: number[] = [];
    const result = await client.callTool(
      { name: 'count', arguments: { steps: 3, delayMs: 1 } },
      undefined,
      {
        onprogress: p => progress.push(p.progress),
      },
    );
    expect(progress).toEqual([1, 2, 3]);
    expect(result.content).toEqual([{ type: 'text', text: 'counted to 3' }]);
  });

  it('asks for elicitation and returns the answer', async () => {
    const client = await connect({ elicitation: {} });
    client.setRequestHandler(ElicitRequestSchema, async request => {
      expect(request.params.message).toBe('Ship it?');
      return { action: 'accept', content: { confirmed: true } };
    });
    const result = await client.callTool({ name: 'confirm', arguments: { question: 'Ship it?' } });
    expect(result.structuredContent).toEqual({ action: 'accept', content: { confirmed: true } });
  });

  it('deploys only once the user accepts, and declares itself destructive', async () => {
    const client = await connect({ elicitation: {} });
    const asked: string[] = [];
    let action: 'accept' | 'decline' | 'cancel' = 'accept';
    client.setRequestHandler(ElicitRequestSchema, async request => {
      asked.push(request.params.message);
      return action === 'accept' ? { action, content: { confirmed: true } } : { action };
    });
    const deploy = (target: string) => client.callTool({ name: 'deploy', arguments: { target } });
    expect((await deploy('staging')).content).toEqual([{ type: 'text', text: 'deployed staging' }]);
    action = 'decline';
    expect((await deploy('production')).content).toEqual([{ type: 'text', text: 'cancelled' }]);
    action = 'cancel';
    expect((await deploy('production')).content).toEqual([{ type: 'text', text: 'cancelled' }]);
    expect(asked).toEqual(['Deploy staging?', 'Deploy production?', 'Deploy production?']);
    const { tools } = await client.listTools();
    expect(tools.find(tool => tool.name === 'deploy')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('holds a deploy call open until the user answers, however long that takes', async () => {
    const client = await connect({ elicitation: {} });
    let answer!: (action: 'accept' | 'decline') => void;
    const elicited = new Promise<void>(resolve => {
      client.setRequestHandler(ElicitRequestSchema, () => {
        resolve();
        return new Promise(done => {
          answer = action => done({ action, ...(action === 'accept' && { content: {} }) });
        });
      });
    });
    let ended = false;
    const call = client
      .callTool({ name: 'deploy', arguments: { target: 'canary' } })
      .finally(() => (ended = true));
    await elicited;
    // Other work on the session goes on while the call waits for its answer.
    await client.callTool({ name: 'echo', arguments: { message: 'meanwhile' } });
    expect(ended).toBe(false);
    answer('accept');
    expect((await call).content).toEqual([{ type: 'text', text: 'deployed canary' }]);
  });

  it('adds and removes a tool on every session and sends tools/list_changed', async () => {
    const watcher = await connect();
    let changes = 0;
    let twoChanges: () => void = () => {};
    const twoChangesArrived = new Promise<void>(resolve => (twoChanges = resolve));
    watcher.setNotificationHandler(ToolListChangedNotificationSchema, async () => {
      if (++changes === 2) twoChanges();
    });
    // The SDK opens the GET stream after connect() resolves: wait until the server has it.
    while (server.openEventStreams() === 0) await new Promise(resolve => setTimeout(resolve, 10));
    const actor = await connect();
    await actor.callTool({ name: 'add_tool', arguments: { name: 'hello' } });
    const names = async () => (await watcher.listTools()).tools.map(t => t.name);
    expect(await names()).toContain('hello');
    await actor.callTool({ name: 'remove_tool', arguments: { name: 'hello' } });
    expect(await names()).not.toContain('hello');
    await twoChangesArrived; // one tools/list_changed for the add, one for the remove
  });

  it('announces prompts/list_changed on demand on every open GET stream (a marker for tests)', async () => {
    const watcher = await connect();
    let announced!: () => void;
    const arrived = new Promise<void>(resolve => (announced = resolve));
    watcher.setNotificationHandler(PromptListChangedNotificationSchema, async () => announced());
    while (server.openEventStreams() === 0) await new Promise(resolve => setTimeout(resolve, 10));
    expect(server.openEventStreams()).toBe(1);
    server.announcePromptsChanged();
    await arrived;
    await watcher.close();
    while (server.openEventStreams() > 0) await new Promise(resolve => setTimeout(resolve, 10));
  });

  it('refuses requests without the bearer token when one is configured', async () => {
    await server.close();
    server = await startExampleMcpServer({ port: 0, bearerToken: 'sekrit' });
    const response = await fetch(server.url, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(response.status).toBe(401);
  });
});
