/*
 * A real OpenTelemetry SDK (metrics and traces) that keeps everything in memory, for tests that
 * read back what the broker recorded: a MeterProvider with a pull reader (collected on demand,
 * as a Prometheus scrape would), a tracer provider with an in-memory span exporter, and the W3C
 * trace context propagator. `install()` makes them the global providers, with the async context
 * manager (what a deployment's instrumentation file does); `uninstall()` puts the no-op defaults
 * back.
 */
import { context, metrics, propagation, trace, type Attributes } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type DataPoint,
  type Histogram,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';

/** A reader that collects only when asked (a test's "scrape"). */
class PullReader extends MetricReader {
  protected async onShutdown(): Promise<void> {}
  protected async onForceFlush(): Promise<void> {}
}

/** One collected data point: its attributes and value (a number, or a histogram). */
export interface CollectedPoint<T> {
  attributes: Attributes;
  value: T;
}

/** In-memory metrics and traces; see the file comment. */
export class InMemoryTelemetry {
  readonly reader = new PullReader();
  readonly meterProvider = new MeterProvider({ readers: [this.reader] });
  readonly spanExporter = new InMemorySpanExporter();
  readonly tracerProvider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.spanExporter)],
  });
  readonly propagator = new W3CTraceContextPropagator();

  /** Everything collected now, by metric name. */
  async collect(): Promise<Map<string, MetricData>> {
    const { resourceMetrics, errors } = await this.reader.collect();
    if (errors.length > 0) throw new Error(`metric collection failed: ${errors.join('; ')}`);
    const byName = new Map<string, MetricData>();
    for (const scope of resourceMetrics.scopeMetrics) {
      for (const metric of scope.metrics) byName.set(metric.descriptor.name, metric);
    }
    return byName;
  }

  /** The data points of metric `name` (none when it was never recorded). */
  async points(name: string): Promise<Array<CollectedPoint<number>>> {
    const metric = (await this.collect()).get(name);
    if (metric === undefined) return [];
    if (metric.dataPointType === DataPointType.HISTOGRAM) {
      throw new Error(`${name} is a histogram: use histogram()`);
    }
    return (metric.dataPoints as Array<DataPoint<number>>).map(p => ({
      attributes: p.attributes,
      value: p.value,
    }));
  }

  /** The histogram data points of metric `name`. */
  async histogram(name: string): Promise<Array<CollectedPoint<Histogram>>> {
    const metric = (await this.collect()).get(name);
    if (metric === undefined) return [];
    if (metric.dataPointType !== DataPointType.HISTOGRAM)
      throw new Error(`${name} is no histogram`);
    return metric.dataPoints.map(p => ({ attributes: p.attributes, value: p.value }));
  }

  /** Finished spans so far. */
  spans(): ReadableSpan[] {
    return this.spanExporter.getFinishedSpans();
  }

  /**
   * Makes these the global providers and propagator, with the async context manager (as the
   * Node SDK in an instrumentation file does).
   */
  install(): this {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    metrics.setGlobalMeterProvider(this.meterProvider);
    trace.setGlobalTracerProvider(this.tracerProvider);
    propagation.setGlobalPropagator(this.propagator);
    return this;
  }

  /** Puts the no-op globals back and shuts the providers down. */
  async uninstall(): Promise<void> {
    metrics.disable();
    trace.disable();
    propagation.disable();
    context.disable();
    await this.meterProvider.shutdown();
    await this.tracerProvider.shutdown();
  }
}

/** The point whose attributes include every entry of `match`; throws naming what exists. */
export function pointWith<T>(
  points: Array<CollectedPoint<T>>,
  match: Attributes,
): CollectedPoint<T> {
  const found = points.find(p =>
    Object.entries(match).every(([key, value]) => p.attributes[key] === value),
  );
  if (found === undefined) {
    throw new Error(
      `no data point with ${JSON.stringify(match)}; have ${JSON.stringify(points.map(p => p.attributes))}`,
    );
  }
  return found;
}
