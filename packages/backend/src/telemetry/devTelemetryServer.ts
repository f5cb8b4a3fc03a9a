/*
 * The development backend's telemetry page, on a port of its own (as Prometheus exporters are):
 *   GET /metrics            every metric in the Prometheus text format (scrape it, or read it)
 *   GET /traces             the most recent traces (JSON: id, first span's name, span count)
 *   GET /traces/<trace id>  one trace's spans, earliest first (JSON), 404 when none is kept
 * Loopback only by default. A port that is taken is reported, never fatal: the backend runs on
 * without the page.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PrometheusExporter } from '@opentelemetry/exporter-prometheus';
import type { RecentSpans } from './RecentSpans';

/** Where the page listens. */
export interface DevTelemetryServerOptions {
  host: string;
  /** 0 picks a free port (printed, and resolved by {@link startDevTelemetryServer}). */
  port: number;
  metrics: Pick<PrometheusExporter, 'getMetricsRequestHandler'>;
  spans: RecentSpans;
}

const TRACE_PATH = /^\/traces\/([0-9a-f]{32})$/;

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(`${JSON.stringify(body, null, 2)}\n`);
}

/** The request handler (also what the tests drive). */
export function devTelemetryHandler(
  options: Pick<DevTelemetryServerOptions, 'metrics' | 'spans'>,
): http.RequestListener {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method !== 'GET') {
      sendJson(res, 405, { error: 'Only GET is served here' });
      return;
    }
    if (path === '/metrics') {
      options.metrics.getMetricsRequestHandler(req, res);
      return;
    }
    if (path === '/traces') {
      sendJson(res, 200, options.spans.traces());
      return;
    }
    const trace = TRACE_PATH.exec(path);
    if (trace) {
      const spans = options.spans.trace(trace[1]);
      if (spans.length === 0) {
        sendJson(res, 404, {
          error: `No spans of trace ${trace[1]} are kept here (unknown, or older than the last spans kept)`,
        });
      } else {
        sendJson(res, 200, spans);
      }
      return;
    }
    sendJson(res, 404, {
      error: 'Not found: use /metrics, /traces or /traces/<32 hex digit trace id>',
    });
  };
}

/**
 * Starts the page; resolves with its base URL, or undefined (with a line on stderr) when it
 * cannot listen.
 */
export function startDevTelemetryServer(
  options: DevTelemetryServerOptions,
): Promise<string | undefined> {
  const server = http.createServer(devTelemetryHandler(options));
  return new Promise(resolve => {
    server.once('error', error => {
      process.stderr.write(
        `Telemetry page not started on ${options.host}:${options.port} (${error.message}); set OTEL_EXPORTER_PROMETHEUS_PORT to another port\n`,
      );
      resolve(undefined);
    });
    server.listen(options.port, options.host, () => {
      // Never keeps the backend process alive by itself.
      server.unref();
      const { port } = server.address() as AddressInfo;
      resolve(`http://${options.host}:${port}`);
    });
  });
}
