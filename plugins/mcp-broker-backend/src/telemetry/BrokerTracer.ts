/*
 * The broker's spans, through the OpenTelemetry API only (the deployment registers the tracer
 * provider and the propagator, as Backstage's telemetry guide sets them up; without them every
 * call here is a no-op).
 *
 * - A client request's span is a SERVER span whose parent is the W3C trace context the client
 *   sent: `params._meta.traceparent`/`tracestate` (where the semantic conventions for MCP carry
 *   it), else the same HTTP headers, validated as traceContext.ts says; a differing valid header
 *   context becomes a span link. No valid context → a new trace.
 * - A backend request's span is a CLIENT span, child of the client request's span (or a root span
 *   for the broker's own requests: lists, the event connection). Its context goes to the backend
 *   as HTTP headers and in `params._meta` (`propagationFields`, see `withTraceMeta`): the trace
 *   fields only, never the client's `baggage` (data the client chose, which the broker does not
 *   pass on to backends, as it passes none of the client's headers).
 * - The client's `tracestate` is validated and bounded before any propagator reads it
 *   (traceContext.ts), so whatever propagator the deployment registers, a client cannot make the
 *   broker carry a malformed or unbounded value to every backend.
 */
import {
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type SpanContext,
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { clientTraceContext, validTraceparent, type TraceCarrier } from './traceContext';

/** The instrumentation scope of the broker's spans (the package's name). */
export const TRACER_NAME = '@devportal/plugin-mcp-broker-backend';

/** Fields a propagator may inject that the broker never passes on to a backend. */
const WITHHELD_FIELDS = new Set(['baggage']);

const getter = {
  keys: (carrier: TraceCarrier) => Object.keys(carrier),
  get: (carrier: TraceCarrier, key: string) => carrier[key],
};

/** A started span and the context that holds it (the parent of its children). */
export interface StartedSpan {
  readonly span: Span;
  readonly context: Context;
}

/** Creates spans and moves trace context in and out; see the file comment. */
export class BrokerTracer {
  readonly #tracer: Tracer;
  readonly #propagator: Pick<TextMapPropagator, 'extract' | 'inject'>;

  /** Spans of `tracerProvider`, context through `propagator` (defaults: the global ones). */
  static create(
    options: { tracerProvider?: TracerProvider; propagator?: TextMapPropagator } = {},
  ): BrokerTracer {
    return new BrokerTracer(
      (options.tracerProvider ?? trace.getTracerProvider()).getTracer(TRACER_NAME),
      options.propagator ?? {
        extract: (ctx, carrier, get) => propagation.extract(ctx, carrier, get),
        inject: (ctx, carrier, set) => propagation.inject(ctx, carrier, set),
      },
    );
  }

  private constructor(tracer: Tracer, propagator: Pick<TextMapPropagator, 'extract' | 'inject'>) {
    this.#tracer = tracer;
    this.#propagator = propagator;
  }

  /**
   * The SERVER span of a client request, continuing the client's trace from `meta` (the
   * request's `params._meta`) or `headers` as traceContext.ts chooses, with a link to the
   * header's context when the two differ.
   */
  startClientRequest(
    name: string,
    attributes: Attributes,
    headers: TraceCarrier,
    meta?: unknown,
  ): StartedSpan {
    const chosen = clientTraceContext(headers, meta);
    const parent = this.#propagator.extract(ROOT_CONTEXT, chosen.carrier, getter);
    const linked =
      chosen.link === undefined
        ? undefined
        : trace.getSpanContext(this.#propagator.extract(ROOT_CONTEXT, chosen.link, getter));
    const span = this.#tracer.startSpan(
      name,
      {
        kind: SpanKind.SERVER,
        attributes,
        ...(linked !== undefined && { links: [{ context: linked }] }),
      },
      parent,
    );
    return { span, context: trace.setSpan(parent, span) };
  }

  /** The CLIENT span of a request to a backend, child of `parent` (none: a new trace). */
  startBackendRequest(name: string, attributes: Attributes, parent?: Context): StartedSpan {
    const base = parent ?? ROOT_CONTEXT;
    const span = this.#tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, base);
    return { span, context: trace.setSpan(base, span) };
  }

  /**
   * The trace context of `context` as the headers a backend request carries (`traceparent`,
   * `tracestate`; empty when tracing is off or the span is not sampled in).
   */
  propagationFields(context: Context): Record<string, string> {
    const fields: Record<string, string> = {};
    this.#propagator.inject(context, fields, {
      set: (carrier, key, value) => {
        if (!WITHHELD_FIELDS.has(key.toLowerCase())) carrier[key] = value;
      },
    });
    return fields;
  }
}

/** The trace id of `span` when it is a real (recorded or propagated) span, else undefined. */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  return trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
}

/** `span`'s context as a W3C `traceparent` (version 00), or undefined when it is not valid. */
export function traceparentOf(span: Span): string | undefined {
  const { traceId, spanId, traceFlags } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext())
    ? `00-${traceId}-${spanId}-${(traceFlags & 0xff).toString(16).padStart(2, '0')}`
    : undefined;
}

/** The remote span context a valid `traceparent` names (traceContext.ts), else undefined. */
export function spanContextOf(traceparent: string): SpanContext | undefined {
  const valid = validTraceparent(traceparent);
  if (valid === undefined) return undefined;
  const [, traceId, spanId, flags] = valid.split('-');
  return { traceId, spanId, traceFlags: parseInt(flags, 16), isRemote: true };
}

/**
 * Ends `span` with the status a request's result calls for: an error (with `exception` recorded
 * when there is one) unless it succeeded.
 */
export function endSpan(
  span: Span,
  failed: boolean,
  message: string | undefined,
  exception?: unknown,
): void {
  if (failed) {
    if (exception instanceof Error) span.recordException(exception);
    span.setStatus({ code: SpanStatusCode.ERROR, message });
  }
  span.end();
}
