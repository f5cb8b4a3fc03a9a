/*
 * The development backend's trace store: an OpenTelemetry span exporter that keeps the most
 * recent spans in memory (a bounded ring, oldest out first) and shows them by trace, so a
 * person can follow one call from the broker into its backend without running a tracing
 * backend. devTelemetryServer.ts serves it at /traces. Development only: production exports
 * spans to a real backend (OTLP, Jaeger …) from its own instrumentation file.
 */
import { SpanKind, SpanStatusCode, type Attributes } from '@opentelemetry/api';
import { ExportResultCode, hrTimeToMilliseconds, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';

/** Spans kept at most (about a few MiB). */
export const DEFAULT_RECENT_SPANS = 5000;

/** One span as /traces shows it. */
export interface ShownSpan {
  traceId: string;
  spanId: string;
  /** Absent for a trace's first span here (its parent, if any, is in the caller's process). */
  parentSpanId?: string;
  name: string;
  kind: string;
  /** The instrumentation scope (which package made the span). */
  scope: string;
  startTime: string;
  durationMs: number;
  status: { code: 'UNSET' | 'OK' | 'ERROR'; message?: string };
  attributes: Attributes;
  events: Array<{ name: string; attributes?: Attributes }>;
}

/** A trace's summary in the list of recent traces. */
export interface TraceSummary {
  traceId: string;
  /** The name of its earliest span here. */
  name: string;
  spans: number;
  startTime: string;
  error: boolean;
}

const STATUS: Record<SpanStatusCode, ShownSpan['status']['code']> = {
  [SpanStatusCode.UNSET]: 'UNSET',
  [SpanStatusCode.OK]: 'OK',
  [SpanStatusCode.ERROR]: 'ERROR',
};

function shown(span: ReadableSpan): ShownSpan {
  const { traceId, spanId } = span.spanContext();
  const start = hrTimeToMilliseconds(span.startTime);
  return {
    traceId,
    spanId,
    ...(span.parentSpanContext === undefined
      ? {}
      : { parentSpanId: span.parentSpanContext.spanId }),
    name: span.name,
    kind: SpanKind[span.kind],
    scope: span.instrumentationScope.name,
    startTime: new Date(start).toISOString(),
    durationMs: Math.round(hrTimeToMilliseconds(span.duration) * 1000) / 1000,
    status: {
      code: STATUS[span.status.code],
      ...(span.status.message === undefined ? {} : { message: span.status.message }),
    },
    attributes: span.attributes,
    events: span.events.map(e => ({
      name: e.name,
      ...(e.attributes === undefined ? {} : { attributes: e.attributes }),
    })),
  };
}

/** A span exporter that keeps the last `capacity` spans; see the file comment. */
export class RecentSpans implements SpanExporter {
  readonly #capacity: number;
  /** Oldest first, with their start in milliseconds (sub-millisecond: parents sort first). */
  readonly #spans: Array<{ span: ShownSpan; startMs: number }> = [];

  constructor(capacity = DEFAULT_RECENT_SPANS) {
    this.#capacity = capacity;
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    for (const span of spans) {
      this.#spans.push({ span: shown(span), startMs: hrTimeToMilliseconds(span.startTime) });
    }
    const excess = this.#spans.length - this.#capacity;
    if (excess > 0) this.#spans.splice(0, excess);
    resultCallback({ code: ExportResultCode.SUCCESS });
  }

  async shutdown(): Promise<void> {
    this.#spans.length = 0;
  }

  async forceFlush(): Promise<void> {}

  /**
   * The spans of `traceId`, earliest first and every parent before its children (clocks tie
   * within a millisecond); empty when none is kept.
   */
  trace(traceId: string): ShownSpan[] {
    const waiting = this.#spans
      .filter(kept => kept.span.traceId === traceId)
      .sort((a, b) => a.startMs - b.startMs)
      .map(kept => kept.span);
    const present = new Set(waiting.map(span => span.spanId));
    const shownIds = new Set<string>();
    const ordered: ShownSpan[] = [];
    while (waiting.length > 0) {
      const next = waiting.findIndex(
        span =>
          span.parentSpanId === undefined ||
          !present.has(span.parentSpanId) ||
          shownIds.has(span.parentSpanId),
      );
      // A cycle cannot happen with real ids; take the earliest rather than loop.
      const [span] = waiting.splice(Math.max(0, next), 1);
      shownIds.add(span.spanId);
      ordered.push(span);
    }
    return ordered;
  }

  /** The most recent traces, newest first (at most `limit`). */
  traces(limit = 50): TraceSummary[] {
    const byTrace = new Map<string, TraceSummary>();
    for (const { span } of this.#spans) {
      const summary = byTrace.get(span.traceId);
      if (summary === undefined) {
        byTrace.set(span.traceId, {
          traceId: span.traceId,
          name: span.name,
          spans: 1,
          startTime: span.startTime,
          error: span.status.code === 'ERROR',
        });
        continue;
      }
      summary.spans += 1;
      summary.error ||= span.status.code === 'ERROR';
      if (span.startTime < summary.startTime) {
        summary.startTime = span.startTime;
        summary.name = span.name;
      }
    }
    return [...byTrace.values()]
      .sort((a, b) => b.startTime.localeCompare(a.startTime))
      .slice(0, limit);
  }
}
