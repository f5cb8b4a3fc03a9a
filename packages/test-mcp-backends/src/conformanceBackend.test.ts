/*
 * The conformance backend serves both eras on one endpoint: the official clients of both SDK
 * generations against one running backend (the full scenario suites: `yarn conformance --direct`
 * and `yarn conformance --direct --era 2026-07-28`).
 */
import {
  Client as ModernClient,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  ElicitRequestSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ConformanceBackend, startConformanceBackend } from './conformanceBackend';

describe('conformance backend (both eras on one endpoint)', () => {
  let backend: ConformanceBackend;
  const clients: Array<{ close(): Promise<void> }> = [];
  beforeAll(async () => {
    backend = await startConformanceBackend();
  });
  afterAll(async () => {
    for (const client of clients) await client.close();
    await backend.close();
  });

  async function modernClient(capabilities: Record<string, unknown> = {}) {
    const client = new ModernClient(
      { name: 'modern-test', version: '1.0.0' },
      { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(backend.url)));
    clients.push(client);
    return client;
  }

  it('serves a pinned 2026-07-28 client statelessly, answering input_required rounds', async () => {
    const client = await modernClient({ elicitation: {} });
    client.setRequestHandler('elicitation/create', async () => ({
      action: 'accept' as const,
      content: { name: 'Alice' },
    }));
    expect(client.getNegotiatedProtocolVersion()).toBe('2026-07-28');
    const { tools } = await client.listTools();
    const names = tools.map(tool => tool.name);
    expect(names).toContain('test_input_required_result_elicitation');
    expect(names).not.toContain('test_tool_with_logging'); // the legacy half's own tool
    const result = await client.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
    });
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Alice!' }]);
    // The 2025 half's elicitation tool exists here too, asking through input_required.
    const legacyNamed = await client.callTool({
      name: 'test_elicitation',
      arguments: { message: 'Who?' },
    });
    expect(legacyNamed.content).toEqual([
      { type: 'text', text: 'User response: action=accept, content={"name":"Alice"}' },
    ]);
  });

  it('delivers a tools/list_changed to a listen stream after the acknowledgement', async () => {
    const client = await modernClient();
    const changed = new Promise<void>(resolve =>
      client.setNotificationHandler('notifications/tools/list_changed', async () => resolve()),
    );
    const subscription = await client.listen({ toolsListChanged: true });
    expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await changed;
    const { tools } = await client.listTools();
    expect(tools.map(tool => tool.name)).toContain('test_dynamic_tool');
    // Back as it was: both halves share this state.
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await subscription.close();
  });

  it('tells 2026-07-28 listen streams of a change a 2025-11-25 client made (one backend, one state)', async () => {
    const modern = await modernClient();
    const changed = new Promise<void>(resolve =>
      modern.setNotificationHandler('notifications/tools/list_changed', async () => resolve()),
    );
    const subscription = await modern.listen({ toolsListChanged: true });
    const legacy = new LegacyClient({ name: 'legacy-test', version: '1.0.0' });
    await legacy.connect(new LegacyTransport(new URL(backend.url)));
    clients.push(legacy);
    await legacy.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await changed;
    expect((await modern.listTools()).tools.map(tool => tool.name)).toContain('test_dynamic_tool');
    await legacy.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    expect((await modern.listTools()).tools.map(tool => tool.name)).not.toContain(
      'test_dynamic_tool',
    );
    await subscription.close();
  });

  it('asks a 2025-11-25 client during the call and announces list changes on its GET stream', async () => {
    const client = new LegacyClient(
      { name: 'legacy-test', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    client.setRequestHandler(ElicitRequestSchema, async () => ({
      action: 'accept' as const,
      content: { name: 'Bea' },
    }));
    const changed = new Promise<void>(resolve =>
      client.setNotificationHandler(ToolListChangedNotificationSchema, async () => resolve()),
    );
    await client.connect(new LegacyTransport(new URL(backend.url)));
    clients.push(client);
    const result = await client.callTool({
      name: 'test_input_required_result_elicitation',
      arguments: {},
    });
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Bea!' }]);
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
    await changed;
    const { tools } = await client.listTools();
    expect(tools.map(tool => tool.name)).toContain('test_dynamic_tool');
    await client.callTool({ name: 'test_trigger_tool_change', arguments: {} });
  });

  it('serves a 2025-11-25 client with a session on the same URL', async () => {
    const client = new LegacyClient({ name: 'legacy-test', version: '1.0.0' });
    await client.connect(new LegacyTransport(new URL(backend.url)));
    clients.push(client);
    const { tools } = await client.listTools();
    expect(tools.map(tool => tool.name)).toContain('test_elicitation');
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(result.content).toEqual([
      { type: 'text', text: 'This is a simple text response for testing.' },
    ]);
  });
});
