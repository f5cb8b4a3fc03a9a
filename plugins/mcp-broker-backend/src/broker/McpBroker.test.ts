/*
 * McpBroker against real MCP servers (the example server and a scripted one), without HTTP on
 * the client side: client GET streams are recorded by a test double of ClientEventStream.
 */
import { mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { readBrokerConfig } from '../config';
import { startScriptedMcpServer, ScriptedMcpServer } from '../testing/scriptedMcpServer';
import { createStreamingToolCallHandler } from '../calls';
import { McpBroker } from './McpBroker';
import { recordingStream } from '../testing/recordingStream';
import { waitFor } from '../testing/waitFor';

describe('McpBroker with real MCP servers (client streams recorded in memory)', () => {
  let example: ExampleMcpServer;
  let scripted: ScriptedMcpServer;
  let broker: McpBroker;
  let logger: ReturnType<typeof mockServices.logger.mock>;

  beforeEach(async () => {
    example = await startExampleMcpServer({ port: 0 });
    scripted = await startScriptedMcpServer({ tools: ['only_here'] });
    const config = readBrokerConfig(
      new ConfigReader({
        mcpBroker: {
          servers: [
            { name: 'example', url: example.url },
            { name: 'scripted', url: scripted.url },
          ],
          reconnect: { initialDelay: { milliseconds: 50 }, maxDelay: { milliseconds: 200 } },
          coalesceWindow: { milliseconds: 20 },
        },
      }),
    );
    logger = mockServices.logger.mock();
    broker = McpBroker.create({
      config,
      logger,
      toolCallHandlerFactory: deps => createStreamingToolCallHandler(deps),
    });
    await waitFor(() =>
      broker.status().backends.every(b => b.state === 'connected' && b.eventStream === 'open'),
    );
  });

  afterEach(async () => {
    await broker.close();
    await example.close();
    await scripted.close();
  });

  async function openClient() {
    const session = await broker.sessions.create({
      principal: 'user:default/alice',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    const stream = recordingStream();
    session.eventStream = stream;
    return { session, stream };
  }

  it('drops a removed server’s entries, closes its session and tells clients tools/list_changed', async () => {
    const { stream } = await openClient();
    expect(broker.catalog().tools.map(t => t.name)).toContain('scripted_only_here');
    broker.setServers(broker.config.servers.filter(s => s.name === 'example'));
    expect(broker.catalog().tools.map(t => t.name)).not.toContain('scripted_only_here');
    // Sent at once, or at the end of the current coalescing window.
    await waitFor(() =>
      stream.messages.some(m => 'method' in m && m.method === 'notifications/tools/list_changed'),
    );
    await waitFor(() => scripted.openEventStreams() === 0);
    expect(broker.status().backends.map(b => b.name)).toEqual(['example']);
  });

  it('connects a server added later and tells clients what changed', async () => {
    const { stream } = await openClient();
    const another = await startScriptedMcpServer({ tools: ['fresh'] });
    try {
      broker.setServers([
        ...broker.config.servers,
        { name: 'another', url: another.url, toolPrefix: 'another_', headers: {} },
      ]);
      await waitFor(() => broker.catalog().tools.some(t => t.name === 'another_fresh'));
      expect(stream.messages).toContainEqual({
        jsonrpc: '2.0',
        method: 'notifications/tools/list_changed',
      });
    } finally {
      await broker.close();
      await another.close();
    }
  });

  it('refreshes the cache before notifying, so a client listing on notification sees the new tool', async () => {
    const { stream } = await openClient();
    let seenOnNotification: string[] = [];
    const originalSend = stream.send;
    stream.send = message => {
      seenOnNotification = broker.catalog().tools.map(t => t.name as string);
      return originalSend(message);
    };
    scripted.tools = ['only_here', 'added'];
    scripted.sendListChanged('tools');
    await waitFor(() => stream.messages.length > 0);
    expect(seenOnNotification).toContain('scripted_added');
  });

  it('ends every backend session and client stream on close', async () => {
    const { stream } = await openClient();
    expect(example.sessionCount()).toBe(1);
    await broker.close();
    expect(stream.closed).toBe(true);
    await waitFor(() => example.sessionCount() === 0);
    expect(broker.status().backends.every(b => b.state === 'closed')).toBe(true);
  });

  it('reports a backend that rejects the broker’s credentials as failed, with the next retry time', async () => {
    const guarded = await startScriptedMcpServer({ requiredAuthorization: 'Bearer right' });
    try {
      broker.setServers([
        ...broker.config.servers,
        {
          name: 'guarded',
          url: guarded.url,
          toolPrefix: 'g_',
          headers: { Authorization: 'Bearer wrong' },
        },
      ]);
      await waitFor(
        () => broker.status().backends.find(b => b.name === 'guarded')?.state === 'failed',
      );
      const status = broker.status().backends.find(b => b.name === 'guarded')!;
      expect(status.lastError).toMatch(/rejected the broker's credentials \(HTTP 401\)/);
      expect(status.nextRetryAt).toBeDefined();
      expect(JSON.stringify(status)).not.toContain('wrong');
    } finally {
      await broker.close();
      await guarded.close();
    }
  });

  it('leaves out a tool with a bad x-mcp-header, warns once, shows it on /status', async () => {
    const annotated = await startScriptedMcpServer({
      tools: ['good', 'bad'],
      inputSchemas: {
        good: { type: 'object', properties: { r: { type: 'string', 'x-mcp-header': 'Region' } } },
        bad: { type: 'object', properties: { r: { type: 'number', 'x-mcp-header': 'Ratio' } } },
      },
    });
    try {
      broker.setServers([
        ...broker.config.servers,
        { name: 'annotated', url: annotated.url, toolPrefix: 'a_', headers: {} },
      ]);
      await waitFor(() => broker.catalog().tools.some(t => t.name === 'a_good'));
      expect(broker.catalog().tools.map(t => t.name)).not.toContain('a_bad');
      expect(broker.catalog().routeTool('a_bad')).toBeUndefined();
      expect(broker.catalog().paramHeadersOf('annotated', 'good')).toEqual([
        { name: 'Region', header: 'mcp-param-region', path: ['r'], type: 'string' },
      ]);
      expect(broker.status().rejectedTools).toEqual([
        { backend: 'annotated', tool: 'bad', reason: expect.stringMatching(/of type number/) },
      ]);
      const warnings = () =>
        logger.warn.mock.calls.filter(([message]) => String(message).includes('x-mcp-header'));
      expect(warnings()).toEqual([
        [expect.stringMatching(/^MCP server "annotated": tool "bad" left out of tools\/list/)],
      ]);
      // Another list change rebuilds the catalog: the same rejection is not logged again. (The
      // event needs the broker's GET stream to that server, which opens after its first list.)
      await waitFor(
        () => broker.status().backends.find(b => b.name === 'annotated')?.eventStream === 'open',
      );
      annotated.tools = ['good', 'bad', 'more'];
      annotated.sendListChanged('tools');
      await waitFor(() => broker.catalog().tools.some(t => t.name === 'a_more'));
      expect(warnings()).toHaveLength(1);
    } finally {
      await broker.close();
      await annotated.close();
    }
  });
  it('hides a later server’s tool whose prefixed name another server holds, warns once naming both', async () => {
    // `shadow` with prefix `scripted_` offers `only_here` too: `scripted_only_here` collides.
    const shadow = await startScriptedMcpServer({ tools: ['only_here', 'own'] });
    try {
      broker.setServers([
        ...broker.config.servers,
        { name: 'shadow', url: shadow.url, toolPrefix: 'scripted_', headers: {} },
      ]);
      await waitFor(() => broker.catalog().tools.some(t => t.name === 'scripted_own'));
      expect(broker.catalog().routeTool('scripted_only_here')).toEqual({
        backend: 'scripted',
        originalName: 'only_here',
      });
      expect(broker.catalog().tools.filter(t => t.name === 'scripted_only_here')).toHaveLength(1);
      expect(broker.status().clashes).toEqual([
        { kind: 'tool', name: 'scripted_only_here', owner: 'scripted', hidden: 'shadow' },
      ]);
      const warnings = () =>
        logger.warn.mock.calls.filter(([message]) => String(message).includes('already serves'));
      expect(warnings()).toEqual([
        [
          expect.stringMatching(
            /^MCP server "shadow": tool "scripted_only_here" hidden, MCP server "scripted" /,
          ),
        ],
      ]);
      await waitFor(
        () => broker.status().backends.find(b => b.name === 'shadow')?.eventStream === 'open',
      );
      shadow.tools = ['only_here', 'own', 'more'];
      shadow.sendListChanged('tools');
      await waitFor(() => broker.catalog().tools.some(t => t.name === 'scripted_more'));
      expect(warnings()).toHaveLength(1);
    } finally {
      await broker.close();
      await shadow.close();
    }
  });
});
