/*
 * The broker's telemetry and rate limits on the development backend as `yarn start` runs it:
 * src/instrumentation.ts loaded first (the OpenTelemetry SDK, the telemetry page with /metrics
 * and /traces), real sign-in, RBAC and user info (bob is in payments-team). Behind the broker:
 * the raw test backend, which records every request's headers, and the example server. Clients:
 * the official SDK client (2025-11-25) and raw 2026-07-28 requests.
 */
import { RawMcpBackend, startRawMcpBackend } from '@internal/test-mcp-backends';
import { ExampleMcpServer, startExampleMcpServer } from '@internal/example-mcp-server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { BackendProcess, startBackendProcess } from '../testing/startBackendProcess';
import { toolCallAuditLines, waitFor } from './brokerTestKit';
import { modernToolCall } from './__testUtils__/modernBrokerClient';

const CLIENT_TRACE = '5c1f2e3d4b5a69788796a5b4c3d2e1f0';
const CLIENT_SPAN = '1a2b3c4d5e6f7081';

interface ShownSpan {
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: string;
  scope: string;
  attributes: Record<string, unknown>;
}

describe('broker telemetry and rate limits on the development backend (instrumentation.ts, real auth and user info)', () => {
  let backend: BackendProcess;
  let raw: RawMcpBackend;
  let example: ExampleMcpServer;
  let telemetry: string;
  const tokens: Record<string, string> = {};

  beforeAll(async () => {
    [raw, example] = await Promise.all([startRawMcpBackend(), startExampleMcpServer({ port: 0 })]);
    backend = await startBackendProcess({
      instrumentation: true,
      // Info level: the auditor's tool-call events are printed.
      env: { LOG_LEVEL: 'info' },
      config: {
        mcpBroker: {
          servers: [
            { name: 'raw', url: raw.url },
            { name: 'example', url: example.url },
          ],
          rateLimits: {
            default: { calls: 1000, per: { hours: 1 } },
            overrides: [
              { server: 'example', tool: 'echo', calls: 3, per: { hours: 1 } },
              {
                server: 'example',
                tool: 'echo',
                group: 'group:default/payments-team',
                calls: 5,
                per: { hours: 1 },
              },
            ],
          },
        },
      },
      startTimeoutMs: 120_000,
    });
    telemetry = await waitFor(() => backend.telemetryUrl(), 10_000, 'the telemetry page');
    for (const user of ['alice', 'bob', 'carol', 'dave']) {
      tokens[user] = await backend.signIn(user);
    }
    await waitFor(
      async () => {
        const status = await fetch(`${backend.baseUrl}/api/mcp-broker/status`, {
          headers: { Authorization: `Bearer ${tokens.carol}` },
        }).then(r => r.json());
        return status.backends.every((b: { state: string }) => b.state === 'connected');
      },
      30_000,
      'both servers connected',
    );
  }, 180_000);

  afterAll(async () => {
    await backend?.stop();
    await Promise.all([raw?.close(), example?.close()]);
  }, 30_000);

  it("follows one call from the client's trace through the broker into the backend: the backend gets a traceparent of the same trace, child of the broker's span", async () => {
    const client = new Client({ name: 'trace-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: {
          headers: {
            Authorization: `Bearer ${tokens.carol}`,
            traceparent: `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`,
          },
        },
      }),
    );
    await client.callTool({ name: 'raw_progress', arguments: { steps: 1 } });
    await client.close();

    const call = raw.requests.find(r => r.method === 'tools/call');
    const traceparent = String(call?.headers.traceparent);
    expect(traceparent).toMatch(new RegExp(`^00-${CLIENT_TRACE}-[0-9a-f]{16}-01$`));
    const backendSpanId = traceparent.split('-')[2];

    // The trace on the development telemetry page (spans are exported in batches: poll).
    const spans = await waitFor(
      async () => {
        const response = await fetch(`${telemetry}/traces/${CLIENT_TRACE}`);
        const shown = response.status === 200 ? ((await response.json()) as ShownSpan[]) : [];
        return shown.some(s => s.spanId === backendSpanId) ? shown : undefined;
      },
      10_000,
      "the call's spans",
    );
    const brokerSpan = spans.find(
      s => s.name === 'tools/call progress' && s.parentSpanId === CLIENT_SPAN,
    );
    expect(brokerSpan).toMatchObject({
      kind: 'SERVER',
      scope: '@devportal/plugin-mcp-broker-backend',
      attributes: expect.objectContaining({
        'mcp.method.name': 'tools/call',
        'gen_ai.tool.name': 'progress',
        'mcp_broker.server': 'raw',
        'mcp_broker.outcome': 'succeeded',
      }),
    });
    expect(spans.find(s => s.spanId === backendSpanId)).toMatchObject({
      kind: 'CLIENT',
      name: 'tools/call progress',
      parentSpanId: brokerSpan!.spanId,
    });

    // The audit event names the same trace.
    const audited = await waitFor(
      () =>
        toolCallAuditLines(backend.output()).find(
          l => l.tool === 'progress' && l.status === 'succeeded',
        ),
      10_000,
      'the audit event',
    );
    expect(audited).toMatchObject({ outcome: 'succeeded', traceId: CLIENT_TRACE });

    // And the metrics page counts it, with bounded labels only.
    const metrics = await fetch(`${telemetry}/metrics`).then(r => r.text());
    const counted = metrics
      .split('\n')
      .find(
        line =>
          line.startsWith('mcp_server_operation_duration_count{') &&
          line.includes('gen_ai_tool_name="progress"'),
      );
    expect(counted).toMatch(/mcp_method_name="tools\/call"/);
    expect(counted).toMatch(/mcp_broker_server="raw"/);
    expect(counted).toMatch(/ 1$/);
    expect(metrics).toMatch(
      /mcp_broker_backend_state\{[^}]*mcp_broker_server="example"[^}]*mcp_broker_backend_state="connected"[^}]*\} 1/,
    );
    expect(metrics).not.toContain('carol');
  }, 60_000);

  it("caps each person's calls (by group through Backstage's user info), in both eras, leaves others alone, and audits every refusal", async () => {
    const modernEcho = (user: string, id: number) =>
      modernToolCall(backend.baseUrl, tokens[user], id, {
        name: 'example_echo',
        arguments: { message: 'limited' },
      });
    const statuses = async (user: string, count: number) => {
      const seen: number[] = [];
      for (let i = 0; i < count; i += 1) seen.push((await modernEcho(user, i + 1)).status);
      return seen;
    };
    // Alice: the limit for everyone (3 per hour); bob, in payments-team: the group's (5).
    expect(await statuses('alice', 4)).toEqual([200, 200, 200, 429]);
    expect(await statuses('bob', 6)).toEqual([200, 200, 200, 200, 200, 429]);
    const refused = await modernEcho('alice', 99);
    expect(refused.response.error).toMatchObject({
      code: -32000,
      data: { reason: 'rate-limited', retryAfterMs: expect.any(Number) },
    });
    expect(refused.response.error.message).toContain('3 tool calls per hour on server "example"');

    // The same budget for alice's 2025-11-25 session.
    const client = new Client({ name: 'limit-e2e', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${backend.baseUrl}/api/mcp-broker/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${tokens.alice}` } },
      }),
    );
    await expect(
      client.callTool({ name: 'example_echo', arguments: { message: 'x' } }),
    ).rejects.toThrow(/rate-limited/);
    // Other tools and other people are not touched.
    await client.callTool({ name: 'example_count', arguments: { steps: 1, delayMs: 0 } });
    await client.close();
    expect(await statuses('dave', 1)).toEqual([200]);

    const refusals = await waitFor(
      () => {
        const lines = toolCallAuditLines(backend.output()).filter(
          l => l.outcome === 'rate-limited',
        );
        return lines.length >= 4 ? lines : undefined;
      },
      10_000,
      'the refusals in the audit trail',
    );
    expect(refusals.map(l => l.principal).sort()).toEqual([
      'user:default/alice',
      'user:default/alice',
      'user:default/alice',
      'user:default/bob',
    ]);
    expect(refusals[0]).toMatchObject({
      server: 'example',
      tool: 'echo',
      status: 'failed',
      retryAfterMs: expect.any(Number),
      limit: 'mcpBroker.rateLimits.overrides[0]',
    });
    const metrics = await fetch(`${telemetry}/metrics`).then(r => r.text());
    const counted = (era: string) =>
      metrics
        .split('\n')
        .find(
          line =>
            line.startsWith('mcp_broker_rate_limit_refusals') &&
            line.includes(`mcp_broker_era="${era}"`),
        );
    expect(counted('modern')).toMatch(/ 3$/);
    expect(counted('legacy')).toMatch(/ 1$/);
  }, 60_000);
});
