/*
 * The broker's spans, through the OpenTelemetry API only (the deployment registers the tracer
 * provider and the propagator, as Backstage's telemetry guide sets them up; without them every
 * call here is a no-op).
 *
 * - A client request's span is a SERVER span whose parent is the W3C trace context the client
 *   sent: the `traceparent`/`tracestate` HTTP headers, or, without those, the same fields in the
 *   request's `params._meta` (where the semantic conventions for MCP carry it over transports
 *   without headers). No context → a new trace.
 * - A backend request's span is a CLIENT span, child of the client request's span (or a root span
 *   for the broker's own requests: lists, the event connection). Its context goes to the backend
 *   as HTTP headers (`propagationFields`): the trace fields only, never the client's `baggage`
 *   (data the client chose, which the broker does not pass on to backends, as it passes none of
 *   the client's headers).
 * - The client's `tracestate` is bounded before any propagator reads it, as W3C Trace Context
 *   allows (§3.3.1.1): at most 32 list-members (the first ones are kept) and 512 characters
 *   (members are dropped from the end until it fits); empty members are dropped. So whatever
 *   propagator the deployment registers, a client cannot make the broker carry an unbounded
 *   header to every backend.
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
  type TextMapPropagator,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import { isPlainObject } from '../protocol/jsonRpc';

/** The instrumentation scope of the broker's spans (the package's name). */
export const TRACER_NAME = '@devportal/plugin-mcp-broker-backend';

/** Header-like carrier (Node's incoming headers: lower-case names, a value or several). */
export type TraceCarrier = Readonly<Record<string, string | string[] | undefined>>;

/** The W3C trace context fields, in headers and in `_meta` alike. */
const TRACE_FIELDS = ['traceparent', 'tracestate'] as const;

/** W3C Trace Context: the most list-members a `tracestate` may carry. */
export const MAX_TRACESTATE_MEMBERS = 32;
/** W3C Trace Context: the longest `tracestate` a vendor must propagate. */
export const MAX_TRACESTATE_LENGTH = 512;

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
   * The SERVER span of a client request, continuing the client's trace from `headers`, or from
   * `meta` (the request's `params._meta`) when the headers carry none.
   */
  startClientRequest(
    name: string,
    attributes: Attributes,
    headers: TraceCarrier,
    meta?: unknown,
  ): StartedSpan {
    const parent = this.#propagator.extract(ROOT_CONTEXT, carrierOf(headers, meta), getter);
    const span = this.#tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
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

/**
 * The carrier to extract from: the headers when they hold a `traceparent`; else `_meta`'s trace
 * fields when it holds one (as strings); else the headers (the propagator finds nothing).
 */
function carrierOf(headers: TraceCarrier, meta: unknown): TraceCarrier {
  if (
    headers.traceparent !== undefined ||
    !isPlainObject(meta) ||
    typeof meta.traceparent !== 'string'
  ) {
    return headers.tracestate === undefined
      ? headers
      : withTracestate(headers, [headers.tracestate].flat().join(','));
  }
  const carrier: Record<string, string> = {};
  for (const field of TRACE_FIELDS) {
    const value = meta[field];
    if (typeof value === 'string') carrier[field] = value;
  }
  return carrier.tracestate === undefined ? carrier : withTracestate(carrier, carrier.tracestate);
}

/** `carrier` with its `tracestate` bounded (see the file comment); without it when empty. */
function withTracestate(carrier: TraceCarrier, tracestate: string): TraceCarrier {
  const { tracestate: _unbounded, ...rest } = carrier;
  const bounded = boundedTracestate(tracestate);
  return bounded === '' ? rest : { ...rest, tracestate: bounded };
}

/**
 * A `tracestate` within W3C's bounds: its first {@link MAX_TRACESTATE_MEMBERS} non-empty
 * list-members, fewer while longer than {@link MAX_TRACESTATE_LENGTH} characters ('' when none
 * fits).
 */
export function boundedTracestate(tracestate: string): string {
  // A value far beyond the bound is not split whole: 33 members of 512 characters at most.
  const head = tracestate.slice(0, (MAX_TRACESTATE_LENGTH + 1) * (MAX_TRACESTATE_MEMBERS + 1));
  const members = head
    .split(',')
    .map(member => member.trim())
    .filter(member => member !== '')
    .slice(0, MAX_TRACESTATE_MEMBERS);
  let joined = members.join(',');
  while (joined.length > MAX_TRACESTATE_LENGTH) {
    members.pop();
    joined = members.join(',');
  }
  return joined;
}

/** The trace id of `span` when it is a real (recorded or propagated) span, else undefined. */
export function traceIdOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  return trace.isSpanContextValid(spanContext) ? spanContext.traceId : undefined;
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
