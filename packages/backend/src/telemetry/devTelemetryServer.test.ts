/*
 * The development backend's telemetry page with the real SDK pieces it runs with: a tracer
 * provider exporting into RecentSpans, and the Prometheus exporter reading a meter provider.
 */
import http from 'node:http';
import { ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import request from 'supertest';
import { RecentSpans } from './RecentSpans';
import { devTelemetryHandler } from './devTelemetryServer';

describe('the development telemetry page', () => {
  const spans = new RecentSpans(3);
  const tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(spans)],
  });
  const metrics = new PrometheusExporter({ preventServerStart: true });
  const meterProvider = new MeterProvider({ readers: [metrics] });
  const server = http.createServer(devTelemetryHandler({ metrics, spans }));

  afterAll(async () => {
    await tracerProvider.shutdown();
    await meterProvider.shutdown();
  });

  it('serves the metrics in the Prometheus text format', async () => {
    meterProvider
      .getMeter('test')
      .createHistogram('mcp.server.operation.duration', { unit: 's' })
      .record(0.2, { 'mcp.method.name': 'tools/call' });
    const response = await request(server).get('/metrics').expect(200);
    expect(response.text).toContain(
      'mcp_server_operation_duration_count{mcp_method_name="tools/call"',
    );
  });

  it('shows a trace by id, parent links and errors included, and lists recent traces', async () => {
    const tracer = tracerProvider.getTracer('@devportal/test');
    const root = tracer.startSpan('tools/call echo');
    const child = tracer.startSpan(
      'tools/call echo',
      { attributes: { 'mcp_broker.server': 'everything' } },
      trace.setSpan(ROOT_CONTEXT, root),
    );
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'backend failed' });
    child.end();
    root.end();
    const traceId = root.spanContext().traceId;

    const shown = await request(server).get(`/traces/${traceId}`).expect(200);
    expect(shown.body).toEqual([
      expect.objectContaining({
        spanId: root.spanContext().spanId,
        name: 'tools/call echo',
        scope: '@devportal/test',
      }),
      expect.objectContaining({
        parentSpanId: root.spanContext().spanId,
        attributes: { 'mcp_broker.server': 'everything' },
        status: { code: 'ERROR', message: 'backend failed' },
      }),
    ]);
    expect(shown.body[0].parentSpanId).toBeUndefined();

    const list = await request(server).get('/traces').expect(200);
    expect(list.body[0]).toMatchObject({ traceId, spans: 2, error: true });
  });

  it('keeps only the most recent spans, and says so for a trace it no longer has', async () => {
    const tracer = tracerProvider.getTracer('@devportal/test');
    const first = tracer.startSpan('first');
    first.end();
    for (let i = 0; i < 3; i += 1) tracer.startSpan(`later ${i}`).end();
    const gone = await request(server).get(`/traces/${first.spanContext().traceId}`).expect(404);
    expect(gone.body.error).toContain('No spans of trace');
    expect((await request(server).get('/traces').expect(200)).body).toHaveLength(3);
    await request(server).get('/traces/not-an-id').expect(404);
    await request(server).post('/metrics').expect(405);
  });
});
