import {
  createContextKey,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  type TextMapPropagator,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BrokerTelemetry, MAX_SPAN_REQUEST_ID_LENGTH } from './BrokerTelemetry';
import { MAX_TRACESTATE_LENGTH, MAX_TRACESTATE_MEMBERS } from './traceContext';
import { MetricName } from './BrokerMetrics';
import { resultOfFinalMessage, SUCCEEDED } from './requestResult';
import { InMemoryTelemetry, pointWith } from './__testUtils__/inMemoryTelemetry';

const CLIENT_TRACE = '0af7651916cd43dd8448eb211c80319c';
const CLIENT_SPAN = 'b7ad6b7169203331';
const TRACEPARENT = `00-${CLIENT_TRACE}-${CLIENT_SPAN}-01`;

describe('BrokerTelemetry', () => {
  let sdk: InMemoryTelemetry;
  let telemetry: BrokerTelemetry;

  beforeEach(() => {
    sdk = new InMemoryTelemetry();
    telemetry = BrokerTelemetry.create(sdk);
  });

  afterEach(async () => {
    telemetry.close();
    await sdk.meterProvider.shutdown();
    await sdk.tracerProvider.shutdown();
  });

  it("continues the client's trace: a SERVER span under its traceparent, a CLIENT span under that, whose context goes to the backend", () => {
    const request = telemetry.clientRequest({
      method: 'tools/call',
      era: 'legacy',
      protocolVersion: '2025-11-25',
      requestId: 7,
      headers: { traceparent: TRACEPARENT, tracestate: 'vendor=1', baggage: 'user=alice' },
    });
    request.routed({ server: 'everything', tool: 'echo' });
    const backend = request.backendRequest({
      server: 'everything',
      tool: 'echo',
      method: 'tools/call',
      era: 'legacy',
    });
    backend.end(SUCCEEDED);
    request.end(SUCCEEDED);

    expect(request.traceId).toBe(CLIENT_TRACE);
    expect(backend.traceId).toBe(CLIENT_TRACE);
    const [clientSide, serverSide] = sdk.spans();
    expect(serverSide.name).toBe('tools/call echo');
    expect(serverSide.kind).toBe(SpanKind.SERVER);
    expect(serverSide.parentSpanContext?.spanId).toBe(CLIENT_SPAN);
    expect(serverSide.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'echo',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': '7',
      'mcp_broker.server': 'everything',
      'mcp_broker.era': 'legacy',
      'mcp_broker.outcome': 'succeeded',
    });
    expect(clientSide.kind).toBe(SpanKind.CLIENT);
    expect(clientSide.parentSpanContext?.spanId).toBe(serverSide.spanContext().spanId);
    expect(clientSide.spanContext().traceId).toBe(CLIENT_TRACE);
    // The backend gets the backend span's context and the client's tracestate, never its baggage.
    expect(backend.propagationFields).toEqual({
      traceparent: `00-${CLIENT_TRACE}-${clientSide.spanContext().spanId}-01`,
      tracestate: 'vendor=1',
    });
  });

  it("bounds the client's tracestate as W3C Trace Context allows, whatever the propagator, and the request id on spans", () => {
    // A test double standing for a deployment's propagator that passes tracestate on unchanged
    // (OpenTelemetry's own W3C propagator bounds the value too; the broker does not rely on that).
    const RAW = createContextKey('raw tracestate');
    const w3c = new W3CTraceContextPropagator();
    const passThrough: TextMapPropagator = {
      extract: (ctx, carrier, getter) => {
        const raw = getter.get(carrier, 'tracestate');
        const extracted = w3c.extract(ctx, carrier, getter);
        return raw === undefined ? extracted : extracted.setValue(RAW, [raw].flat().join(','));
      },
      inject: (ctx, carrier, setter) => {
        w3c.inject(ctx, carrier, setter);
        const raw = ctx.getValue(RAW);
        if (typeof raw === 'string') setter.set(carrier, 'tracestate', raw);
      },
      fields: () => w3c.fields(),
    };
    const bounded = BrokerTelemetry.create({ ...sdk, propagator: passThrough });
    const forwarded = (tracestate: string | string[], requestId: string | number = 1) => {
      const request = bounded.clientRequest({
        method: 'tools/call',
        era: 'legacy',
        requestId,
        headers: { traceparent: TRACEPARENT, tracestate },
      });
      const backend = request.backendRequest({
        server: 's',
        tool: 't',
        method: 'tools/call',
        era: 'legacy',
      });
      backend.end(SUCCEEDED);
      request.end(SUCCEEDED);
      return backend.propagationFields.tracestate;
    };
    const members = Array.from({ length: 40 }, (_, i) => `v${i}=x`);
    // Within bounds: passed on as sent (several headers are one list).
    expect(forwarded(['a=1', 'b=2'])).toBe('a=1,b=2');
    // 40 members: the first 32.
    expect(forwarded(members.join(','))).toBe(members.slice(0, MAX_TRACESTATE_MEMBERS).join(','));
    // Over 512 characters: members dropped from the end until it fits.
    const long = Array.from({ length: 5 }, (_, i) => `k${i}=${'y'.repeat(120)}`);
    const kept = forwarded(long.join(','))!;
    expect(kept).toBe(long.slice(0, 4).join(','));
    expect(kept.length).toBeLessThanOrEqual(MAX_TRACESTATE_LENGTH);
    // One member that alone is too long: nothing is passed on.
    expect(forwarded(`huge=${'z'.repeat(600)}`)).toBeUndefined();
    // The client's request id on the span is cut to its bound.
    forwarded('a=1', 'i'.repeat(1000));
    const ids = sdk.spans().map(span => String(span.attributes['jsonrpc.request.id'] ?? ''));
    expect(Math.max(...ids.map(id => id.length))).toBe(MAX_SPAN_REQUEST_ID_LENGTH);
    bounded.close();
  });

  it('takes the trace context from params._meta when the headers carry none', () => {
    const request = telemetry.clientRequest({
      method: 'tools/list',
      era: 'modern',
      headers: {},
      meta: { traceparent: TRACEPARENT, 'io.modelcontextprotocol/protocolVersion': '2026-07-28' },
    });
    request.end(SUCCEEDED);
    expect(request.traceId).toBe(CLIENT_TRACE);
    expect(sdk.spans()[0].parentSpanContext?.spanId).toBe(CLIENT_SPAN);
  });

  it('starts a new trace without a client context, and ignores a malformed traceparent', () => {
    const plain = telemetry.clientRequest({ method: 'ping', era: 'legacy', headers: {} });
    const malformed = telemetry.clientRequest({
      method: 'ping',
      era: 'legacy',
      headers: { traceparent: 'not-a-trace' },
    });
    plain.end(SUCCEEDED);
    malformed.end(SUCCEEDED);
    expect(plain.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(malformed.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(new Set([plain.traceId, malformed.traceId, CLIENT_TRACE]).size).toBe(3);
    for (const span of sdk.spans()) expect(span.parentSpanContext).toBeUndefined();
  });

  it('records both operation durations with bounded attributes, and errors on the span', async () => {
    const ok = telemetry.clientRequest({ method: 'tools/call', era: 'modern', headers: {} });
    ok.routed({ server: 'everything', tool: 'echo' });
    ok.backendRequest({
      server: 'everything',
      tool: 'echo',
      method: 'tools/call',
      era: 'modern',
    }).end(SUCCEEDED);
    ok.end(SUCCEEDED);
    const toolError = telemetry.clientRequest({ method: 'tools/call', era: 'modern', headers: {} });
    toolError.routed({ server: 'everything', tool: 'echo' });
    const failed = resultOfFinalMessage({ jsonrpc: '2.0', id: 1, result: { isError: true } });
    toolError.end(failed);
    toolError.end(SUCCEEDED); // a second end is ignored
    const unknown = telemetry.clientRequest({ method: 'x/made-up', era: 'legacy', headers: {} });
    unknown.end(
      resultOfFinalMessage({ jsonrpc: '2.0', id: 2, error: { code: -32601, message: '' } }),
    );

    const server = await sdk.histogram(MetricName.serverOperationDuration);
    const succeeded = pointWith(server, { 'mcp_broker.outcome': 'succeeded' });
    expect(succeeded.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'mcp_broker.era': 'modern',
      'mcp_broker.server': 'everything',
      'gen_ai.tool.name': 'echo',
      'mcp_broker.outcome': 'succeeded',
    });
    expect(succeeded.value.count).toBe(1);
    expect(succeeded.value.buckets.boundaries).toEqual([
      0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300,
    ]);
    expect(pointWith(server, { 'error.type': 'tool_error' }).value.count).toBe(1);
    expect(pointWith(server, { 'mcp.method.name': '_OTHER' }).attributes).toMatchObject({
      'mcp_broker.outcome': 'failed',
      'error.type': '-32601',
    });
    expect(server).toHaveLength(3);
    const client = await sdk.histogram(MetricName.clientOperationDuration);
    expect(client).toHaveLength(1);
    expect(client[0].attributes).toMatchObject({ 'mcp_broker.server': 'everything' });

    const toolErrorSpan = sdk.spans().find(s => s.attributes['error.type'] === 'tool_error');
    expect(toolErrorSpan?.status.code).toBe(SpanStatusCode.ERROR);
    const unknownSpan = sdk.spans().find(s => s.name === '_OTHER');
    expect(unknownSpan?.attributes['rpc.response.status_code']).toBe('-32601');
  });

  it('records an exception that ended a backend request', () => {
    const request = telemetry.backendRequest({ server: 'down', method: 'tools/list' });
    request.end({
      outcome: 'failed',
      errorType: '-32603',
      reason: 'unreachable',
      exception: new Error('connect ECONNREFUSED'),
    });
    const [span] = sdk.spans();
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'unreachable' });
    expect(span.events.map(e => e.attributes?.['exception.message'])).toEqual([
      'connect ECONNREFUSED',
    ]);
  });

  it('reports sessions, streams, backend states and calls in flight when collected', async () => {
    let sessions = 3;
    telemetry.observe(() => ({
      sessions,
      eventStreams: 2,
      listenStreams: 1,
      backends: [
        { name: 'everything', state: 'connected' },
        { name: 'flaky', state: 'backing-off' },
      ],
    }));
    const call = telemetry.clientRequest({ method: 'tools/call', era: 'legacy', headers: {} });
    call.routed({ server: 'everything', tool: 'echo' });

    expect(await sdk.points(MetricName.sessions)).toEqual([{ attributes: {}, value: 3 }]);
    const streams = await sdk.points(MetricName.streams);
    expect(pointWith(streams, { 'mcp_broker.stream.kind': 'session-get' }).value).toBe(2);
    expect(pointWith(streams, { 'mcp_broker.stream.kind': 'listen' }).value).toBe(1);
    const states = await sdk.points(MetricName.backendState);
    expect(states).toHaveLength(10);
    const stateOf = (server: string) =>
      states
        .filter(p => p.attributes['mcp_broker.server'] === server && p.value === 1)
        .map(p => p.attributes['mcp_broker.backend.state']);
    expect(stateOf('everything')).toEqual(['connected']);
    expect(stateOf('flaky')).toEqual(['backing-off']);
    const inFlight = await sdk.points(MetricName.callsInFlight);
    expect(
      pointWith(inFlight, { 'mcp_broker.server': 'everything', 'mcp_broker.era': 'legacy' }).value,
    ).toBe(1);
    expect(pointWith(inFlight, { 'mcp_broker.server': 'flaky' }).value).toBe(0);

    call.end(SUCCEEDED);
    sessions = 0;
    expect(await sdk.points(MetricName.sessions)).toEqual([{ attributes: {}, value: 0 }]);
    expect(
      pointWith(await sdk.points(MetricName.callsInFlight), {
        'mcp_broker.server': 'everything',
        'mcp_broker.era': 'legacy',
      }).value,
    ).toBe(0);
  });

  it('counts denials, rate-limit refusals and relayed cancellations', async () => {
    telemetry.metrics.denied('tools/call', 'mcp-broker.tool.use', 'everything');
    telemetry.metrics.denied('initialize', 'mcp-broker.session.create');
    telemetry.metrics.rateLimited('everything', 'modern', 'config');
    telemetry.metrics.rateLimited('everything', 'modern', 'config');
    telemetry.metrics.rateLimited('everything', 'modern', 'plan');
    telemetry.metrics.cancellationRelayed('everything', 'replica');

    const denials = await sdk.points(MetricName.denials);
    expect(pointWith(denials, { 'mcp_broker.permission': 'mcp-broker.tool.use' })).toEqual({
      attributes: {
        'mcp.method.name': 'tools/call',
        'mcp_broker.permission': 'mcp-broker.tool.use',
        'mcp_broker.server': 'everything',
      },
      value: 1,
    });
    // Where the refusing limit comes from, never whose it was.
    const refused = (limitSource: string) => ({
      'mcp_broker.server': 'everything',
      'mcp_broker.era': 'modern',
      'mcp_broker.limit_source': limitSource,
    });
    expect(await sdk.points(MetricName.rateLimitRefusals)).toEqual(
      expect.arrayContaining([
        { attributes: refused('config'), value: 2 },
        { attributes: refused('plan'), value: 1 },
      ]),
    );
    expect(await sdk.points(MetricName.rateLimitRefusals)).toHaveLength(2);
    expect(await sdk.points(MetricName.relayedCancellations)).toEqual([
      {
        attributes: {
          'mcp_broker.server': 'everything',
          'mcp_broker.cancellation.source': 'replica',
        },
        value: 1,
      },
    ]);
  });

  it('costs nothing visible without an SDK: no trace id, no trace fields for the backend', () => {
    const noop = BrokerTelemetry.create();
    const request = noop.clientRequest({
      method: 'tools/call',
      era: 'legacy',
      headers: { traceparent: TRACEPARENT },
    });
    const backend = request.backendRequest({ server: 's', method: 'tools/call' });
    expect(request.traceId).toBeUndefined();
    expect(backend.propagationFields).toEqual({});
    expect(propagation.extract(ROOT_CONTEXT, { traceparent: TRACEPARENT })).toBe(ROOT_CONTEXT);
    backend.end(SUCCEEDED);
    request.end(SUCCEEDED);
    noop.close();
  });
});
