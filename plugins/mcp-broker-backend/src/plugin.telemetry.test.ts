/*
 * The broker's telemetry and rate limits in a test backend (startTestBackend, mocked auth),
 * against the scripted MCP server, with the official SDK client and raw HTTP. The OpenTelemetry
 * SDK runs for real, keeping what it records in memory (InMemoryTelemetry, installed as an
 * instrumentation file would); the auditor is a test double that records the events.
 */
import type { AddressInfo } from 'node:net';
import { mockCredentials, mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { mcpBrokerPlugin } from './plugin';
import { recordingAuditor, type RecordedAuditEvent } from './__testUtils__/recordingAuditor';
import { withModernEnvelope } from './backend/ModernChannel';
import { MetricName } from './telemetry/BrokerMetrics';
import { InMemoryTelemetry, pointWith } from './telemetry/__testUtils__/inMemoryTelemetry';
import { initializeRequest } from './testing/initializeRequest';
import { ScriptedMcpServer, startScriptedMcpServer } from './testing/scriptedMcpServer';
import { waitFor } from './testing/waitFor';

const CLIENT_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const CLIENT_SPAN = '00f067aa0ba902b7';

describe('broker telemetry and rate limits (startTestBackend, the OpenTelemetry SDK in memory, an auditor test double)', () => {
  const sdk = new InMemoryTelemetry();
  let audit: RecordedAuditEvent[] = [];
  let scripted: ScriptedMcpServer;
  let stop: () => Promise<void>;
  let endpoint: string;

  beforeAll(async () => {
    sdk.install();
    scripted = await startScriptedMcpServer({ tools: ['echo', 'search_docs'] });
    const auditor = recordingAuditor();
    audit = auditor.events;
    const { server } = await startTestBackend({
      features: [
        mcpBrokerPlugin,
        auditor.factory,
        mockServices.rootConfig.factory({
          data: {
            mcpBroker: {
              servers: [{ name: 'scripted', url: scripted.url }],
              rateLimits: {
                overrides: [{ server: 'scripted', tool: 'search_*', calls: 2, per: { hours: 1 } }],
              },
            },
          },
        }),
      ],
    });
    stop = async () => server.stop?.();
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/mcp-broker/mcp`;
    await waitFor(() => scripted.initializeCount() >= 1, 'the broker to connect to the server');
  });

  afterAll(async () => {
    await stop?.();
    await scripted?.close();
    await sdk.uninstall();
  });

  it("measures client and backend requests with bounded attributes, and continues the client's trace into the backend", async () => {
    const client = new Client({ name: 'telemetry-test', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(endpoint), {
        requestInit: {
          headers: {
            Authorization: mockCredentials.user.header('user:default/alice'),
            traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
          },
        },
      }),
    );
    await client.callTool({ name: 'scripted_echo', arguments: { message: 'one' } });
    await client.callTool({ name: 'scripted_echo', arguments: { message: 'two' } });
    await expect(client.callTool({ name: 'user-typed-anything', arguments: {} })).rejects.toThrow(
      /unknown tool/,
    );

    const server = await sdk.histogram(MetricName.serverOperationDuration);
    const echo = pointWith(server, {
      'mcp.method.name': 'tools/call',
      'mcp_broker.outcome': 'succeeded',
    });
    expect(echo.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'mcp_broker.era': 'legacy',
      'mcp.protocol.version': '2025-11-25',
      'mcp_broker.server': 'scripted',
      'gen_ai.tool.name': 'echo',
      'mcp_broker.outcome': 'succeeded',
    });
    expect(echo.value.count).toBe(2);
    // An unknown name is never an attribute value: no server, no tool, just the error.
    expect(
      pointWith(server, { 'mcp.method.name': 'tools/call', 'mcp_broker.outcome': 'failed' })
        .attributes,
    ).toEqual({
      'mcp.method.name': 'tools/call',
      'mcp_broker.era': 'legacy',
      'mcp.protocol.version': '2025-11-25',
      'mcp_broker.outcome': 'failed',
      'error.type': '-32602',
    });
    expect(pointWith(server, { 'mcp.method.name': 'initialize' }).value.count).toBe(1);
    const backend = pointWith(await sdk.histogram(MetricName.clientOperationDuration), {
      'mcp.method.name': 'tools/call',
    });
    expect(backend.attributes).toMatchObject({
      'mcp_broker.server': 'scripted',
      'gen_ai.tool.name': 'echo',
      'mcp_broker.era': 'legacy',
      'mcp_broker.outcome': 'succeeded',
    });
    expect(backend.value.count).toBe(2);

    expect(await sdk.points(MetricName.sessions)).toEqual([{ attributes: {}, value: 1 }]);
    expect(
      pointWith(await sdk.points(MetricName.backendState), {
        'mcp_broker.server': 'scripted',
        'mcp_broker.backend.state': 'connected',
      }).value,
    ).toBe(1);
    expect(
      pointWith(await sdk.points(MetricName.callsInFlight), { 'mcp_broker.server': 'scripted' })
        .value,
    ).toBe(0);

    // client span → the broker's SERVER span → its CLIENT span → the backend's traceparent.
    const spans = sdk.spans().filter(s => s.spanContext().traceId === CLIENT_TRACE);
    const calls = spans.filter(s => s.name === 'tools/call echo');
    const serverSpan = calls.find(s => s.parentSpanContext?.spanId === CLIENT_SPAN)!;
    const clientSpan = calls.find(
      s => s.parentSpanContext?.spanId === serverSpan.spanContext().spanId,
    )!;
    expect(clientSpan).toBeDefined();
    const seen = scripted.toolCallTraceparents();
    expect(seen).toContain(`00-${CLIENT_TRACE}-${clientSpan.spanContext().spanId}-01`);
    // The same context in `params._meta` (contract tasks-and-apps §4), nothing else of the client's.
    const metaOfCall =
      scripted.toolCallMetas()[
        seen.indexOf(`00-${CLIENT_TRACE}-${clientSpan.spanContext().spanId}-01`)
      ];
    expect(metaOfCall).toEqual({
      traceparent: `00-${CLIENT_TRACE}-${clientSpan.spanContext().spanId}-01`,
    });
    expect(audit.find(e => e.meta.tool === 'echo')?.meta.traceId).toBe(CLIENT_TRACE);
    await client.close();
  });

  it("prefers the client's _meta trace context to its header (linking the header's), and passes the broker's on in both carriers, never the client's baggage", async () => {
    const META_TRACE = '0af7651916cd43dd8448eb211c80319c';
    const META_SPAN = 'b7ad6b7169203331';
    const headers = {
      Authorization: mockCredentials.user.header('user:default/alice'),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const init = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify(initializeRequest()),
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    const before = scripted.toolCallMetas().length;
    const call = await fetch(endpoint, {
      method: 'POST',
      headers: {
        ...headers,
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
        traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
        baggage: 'user=alice',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: {
          name: 'scripted_echo',
          arguments: { message: 'meta' },
          _meta: {
            traceparent: `00-${META_TRACE}-${META_SPAN}-01`,
            tracestate: 'vendor=meta,vendor=twice',
            baggage: 'user=alice',
            progressToken: 'p-1',
          },
        },
      }),
    });
    expect(call.status).toBe(200);
    await call.text();

    const serverSpan = sdk
      .spans()
      .find(s => s.name === 'tools/call echo' && s.parentSpanContext?.spanId === META_SPAN)!;
    expect(serverSpan.spanContext().traceId).toBe(META_TRACE);
    expect(serverSpan.links.map(link => link.context.spanId)).toEqual([CLIENT_SPAN]);
    const clientSpan = sdk
      .spans()
      .find(s => s.parentSpanContext?.spanId === serverSpan.spanContext().spanId)!;
    const sent = `00-${META_TRACE}-${clientSpan.spanContext().spanId}-01`;
    // Both carriers hold the broker's CLIENT span; the tracestate with a repeated key was
    // discarded whole; the client's baggage went nowhere; its progress token passed.
    expect(scripted.toolCallTraceparents().slice(before)).toEqual([sent]);
    expect(scripted.toolCallMetas().slice(before)).toEqual([
      { progressToken: 'p-1', traceparent: sent },
    ]);
  });

  /** A raw 2025-11-25 session of `user` (for the HTTP status and headers of refusals). */
  async function rawSession(user: string) {
    const headers = {
      Authorization: mockCredentials.user.header(`user:default/${user}`),
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    };
    const init = await fetch(endpoint, {
      method: 'POST',
      headers,
      body: JSON.stringify(initializeRequest()),
    });
    const sessionId = init.headers.get('mcp-session-id')!;
    await init.text();
    let id = 1;
    return async (tool: string) => {
      id += 1;
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: { ...headers, 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id,
          method: 'tools/call',
          params: { name: tool, arguments: { message: 'x' } },
        }),
      });
      return { response, text: await response.text() };
    };
  }

  it('refuses a person over a limit (429, Retry-After, -32000 with retryAfterMs) in both eras, leaves another person alone, and counts and audits it', async () => {
    const carol = await rawSession('carol');
    const bob = await rawSession('bob');
    expect((await carol('scripted_search_docs')).response.status).toBe(200);
    expect((await carol('scripted_search_docs')).response.status).toBe(200);
    const refused = await carol('scripted_search_docs');
    expect(refused.response.status).toBe(429);
    const retryAfter = Number(refused.response.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    const body = JSON.parse(refused.text);
    expect(body.error).toEqual({
      code: -32000,
      message: expect.stringMatching(
        /^Rate limit reached: 2 tool calls per hour on server "scripted" \(tools "search_\*"\) for each person; retry in \d+ s$/,
      ),
      data: { reason: 'rate-limited', retryAfterMs: expect.any(Number) },
    });
    expect(Math.ceil(body.error.data.retryAfterMs / 1000)).toBe(retryAfter);
    // Other tools of the server are not in this limit; another person has a budget of their own.
    expect((await carol('scripted_echo')).response.status).toBe(200);
    expect((await bob('scripted_search_docs')).response.status).toBe(200);
    expect((await bob('scripted_search_docs')).response.status).toBe(200);

    // The same budget holds for a 2026-07-28 request of the same person.
    const modern = await fetch(endpoint, {
      method: 'POST',
      headers: {
        Authorization: mockCredentials.user.header('user:default/carol'),
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'scripted_search_docs',
      },
      body: JSON.stringify(
        withModernEnvelope(
          {
            jsonrpc: '2.0',
            id: 9,
            method: 'tools/call',
            params: { name: 'scripted_search_docs', arguments: {} },
          },
          {},
        ),
      ),
    });
    expect(modern.status).toBe(429);
    expect((await modern.json()).error.data.reason).toBe('rate-limited');

    const refusals = await sdk.points(MetricName.rateLimitRefusals);
    expect(pointWith(refusals, { 'mcp_broker.era': 'legacy' }).value).toBe(1);
    // (bob's calls were his own two.)
    expect(pointWith(refusals, { 'mcp_broker.era': 'modern' }).value).toBe(1);
    const limited = audit.filter(e => e.end?.outcome === 'rate-limited');
    expect(limited).toHaveLength(2);
    expect(limited[0]).toMatchObject({
      meta: { principal: 'user:default/carol', server: 'scripted', tool: 'search_docs' },
      end: { meta: { limit: 'mcpBroker.rateLimits.overrides[0]', durationMs: 0 } },
    });
    expect(limited[0].end?.meta.retryAfterMs).toEqual(expect.any(Number));
    const limitedCalls = (await sdk.histogram(MetricName.serverOperationDuration)).filter(
      p => p.attributes['mcp_broker.outcome'] === 'rate-limited',
    );
    expect(limitedCalls.map(p => [p.attributes['mcp_broker.era'], p.value.count])).toEqual([
      ['legacy', 1],
      ['modern', 1],
    ]);
  });
});
