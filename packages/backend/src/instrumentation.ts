/*
 * OpenTelemetry for the development backend, set up the way Backstage's telemetry guide does
 * (docs: "Setup OpenTelemetry"): loaded with `--require` before the backend (`yarn start` does,
 * see package.json), it registers the OpenTelemetry SDK, and every plugin that uses the
 * OpenTelemetry API — the MCP broker, the catalog … — reports through it. The plugins hard-wire
 * no exporter; this file is where a deployment chooses them.
 *
 * Here, for a person on their machine, both go to a local page (devTelemetryServer.ts):
 *   http://127.0.0.1:9464/metrics      Prometheus text format (the Prometheus exporter)
 *   http://127.0.0.1:9464/traces       recent traces; /traces/<id> one trace's spans
 * Environment: OTEL_EXPORTER_PROMETHEUS_PORT (default 9464; 0 picks a free port),
 * OTEL_EXPORTER_PROMETHEUS_HOST (default 127.0.0.1), OTEL_SERVICE_NAME (default
 * backstage-devportal), OTEL_SDK_DISABLED=true turns it all off. Every span is kept (the default
 * parent-based, always-on sampler): right for development, where one call is followed at a time.
 */
import { isMainThread } from 'node:worker_threads';
import { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { RecentSpans } from './telemetry/RecentSpans';
import { startDevTelemetryServer } from './telemetry/devTelemetryServer';

/** The Prometheus exporter's own default port. */
const DEFAULT_PORT = 9464;

function start(): void {
  const port = Number(process.env.OTEL_EXPORTER_PROMETHEUS_PORT ?? DEFAULT_PORT);
  const host = process.env.OTEL_EXPORTER_PROMETHEUS_HOST ?? '127.0.0.1';
  // The page below serves the exporter's handler: the exporter opens no server of its own.
  const metrics = new PrometheusExporter({ preventServerStart: true });
  const spans = new RecentSpans();
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'backstage-devportal',
    metricReaders: [metrics],
    spanProcessors: [new BatchSpanProcessor(spans, { scheduledDelayMillis: 200 })],
    instrumentations: [],
  });
  sdk.start();
  void startDevTelemetryServer({ host, port, metrics, spans }).then(url => {
    if (url !== undefined) {
      process.stdout.write(`Telemetry: metrics at ${url}/metrics, traces at ${url}/traces\n`);
    }
  });
}

// Worker threads load the --require'd file too: the SDK belongs to the main thread only.
if (isMainThread && process.env.OTEL_SDK_DISABLED !== 'true') start();
