/*
 * The broker's telemetry as the request path uses it: one object per client request and one per
 * backend request, each measuring its duration into the MCP semantic conventions' histogram and
 * carrying its span, so a call site says "started", "routed to", "ended with" and nothing else.
 *
 *   client request ──────────────────────────────── mcp.server.operation.duration, SERVER span
 *       └─ backend request (0…n) ──────────────── mcp.client.operation.duration, CLIENT span
 *                                                   (its trace context → the backend's headers)
 *
 * Both use the OpenTelemetry API only (BrokerMetrics, BrokerTracer): with no SDK registered the
 * spans are non-recording and the instruments no-ops. `end` is idempotent (a call may be ended by
 * its answer and again by its connection closing); the first result counts.
 */
import {
  context as contextApi,
  type Attributes,
  type Context,
  type MeterProvider,
  type Span,
  type TextMapPropagator,
  type TracerProvider,
} from '@opentelemetry/api';
import type { JsonRpcId } from '../protocol/jsonRpc';
import { BrokerMetrics, type BrokerGaugeSnapshot } from './BrokerMetrics';
import { BrokerTracer, endSpan, traceIdOf, type TraceCarrier } from './BrokerTracer';
import type { RequestResult } from './requestResult';
import { Attr, boundedMethod, type Era } from './telemetryAttributes';

/** Options of {@link BrokerTelemetry.create}; every default is the global OpenTelemetry one. */
export interface BrokerTelemetryOptions {
  meterProvider?: MeterProvider;
  tracerProvider?: TracerProvider;
  propagator?: TextMapPropagator;
}

/** What is known of a client request when it arrives. */
export interface ClientRequestStart {
  /** The JSON-RPC method (bounded before it is recorded). */
  method: string;
  /** The client's era: a session (2025-xx) or a stateless 2026-07-28 request. */
  era: Era;
  /** The client's protocol version, when it is one the broker speaks. */
  protocolVersion?: string;
  requestId?: JsonRpcId;
  /** The request's HTTP headers (trace context). */
  headers: TraceCarrier;
  /** The request's `params._meta` (trace context when the headers carry none). */
  meta?: unknown;
}

/** What a request turned out to address, once its name resolved in the catalog. */
export interface RequestTarget {
  /** The configured backend server. */
  server: string;
  /** The backend's own tool name (`tools/call`). */
  tool?: string;
  /** The backend's own prompt name (`prompts/get`). */
  prompt?: string;
}

/** What is known of a backend request when it is sent. */
export interface BackendRequestStart extends RequestTarget {
  method: string;
  /** The era the broker speaks to this backend, when known. */
  era?: Era;
  protocolVersion?: string;
}

/** Telemetry of one backend request. */
export interface BackendRequestTelemetry {
  /** Trace context for the request's transport (`traceparent`, `tracestate`); may be empty. */
  readonly propagationFields: Readonly<Record<string, string>>;
  readonly traceId: string | undefined;
  end(result: RequestResult): void;
}

/** Telemetry of one client request. */
export interface ClientRequestTelemetry {
  /** The request's method as recorded (`_OTHER` for one the specification does not define). */
  readonly method: string;
  /** The client's era. */
  readonly era: Era;
  /** The trace the request belongs to (undefined when tracing is off). */
  readonly traceId: string | undefined;
  /** The request's context (the parent of its backend requests' spans). */
  readonly context: Context;
  /** The request resolved to `target` (sets attributes; a `tools/call` counts as in flight). */
  routed(target: RequestTarget): void;
  /** A request to a backend made for this client request. */
  backendRequest(start: BackendRequestStart): BackendRequestTelemetry;
  /** Records the duration and ends the span (the first call counts). */
  end(result: RequestResult): void;
  /**
   * Runs `fn` with the request's context active, so that what it does (log lines, backend
   * requests) belongs to the request's trace (with the SDK's async context manager).
   */
  run<T>(fn: () => T): T;
}

/** Seconds since `started` (a `performance.now()` reading). */
function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}

/** The attributes of a result: the outcome, and `error.type` when it did not succeed. */
function resultAttributes(result: RequestResult): Attributes {
  return result.errorType === undefined
    ? { [Attr.outcome]: result.outcome }
    : { [Attr.outcome]: result.outcome, [Attr.errorType]: result.errorType };
}

/** The target's attributes (server, tool or prompt). */
function targetAttributes(target: RequestTarget): Attributes {
  const attributes: Attributes = { [Attr.server]: target.server };
  if (target.tool !== undefined) attributes[Attr.toolName] = target.tool;
  if (target.prompt !== undefined) attributes[Attr.promptName] = target.prompt;
  return attributes;
}

/** `tools/call echo`, as the semantic conventions name spans (`{method} {target}`). */
function spanName(method: string, target?: RequestTarget): string {
  const name = target?.tool ?? target?.prompt;
  return name === undefined ? method : `${method} ${name}`;
}

/** The broker's metrics and spans; see the file comment. */
export class BrokerTelemetry {
  readonly metrics: BrokerMetrics;
  readonly #tracer: BrokerTracer;

  static create(options: BrokerTelemetryOptions = {}): BrokerTelemetry {
    return new BrokerTelemetry(
      BrokerMetrics.create(options.meterProvider),
      BrokerTracer.create(options),
    );
  }

  private constructor(metrics: BrokerMetrics, tracer: BrokerTracer) {
    this.metrics = metrics;
    this.#tracer = tracer;
  }

  /** Where the gauges read the broker's sessions, streams and backend states. */
  observe(snapshot: () => BrokerGaugeSnapshot): void {
    this.metrics.observe(snapshot);
  }

  close(): void {
    this.metrics.close();
  }

  /** Starts the telemetry of a client request. */
  clientRequest(start: ClientRequestStart): ClientRequestTelemetry {
    const started = performance.now();
    const method = boundedMethod(start.method);
    const attributes: Attributes = { [Attr.methodName]: method, [Attr.era]: start.era };
    if (start.protocolVersion !== undefined)
      attributes[Attr.protocolVersion] = start.protocolVersion;
    const { span, context } = this.#tracer.startClientRequest(
      method,
      spanAttributes(attributes, start.requestId),
      start.headers,
      start.meta,
    );
    const metrics = this.metrics;
    const tracer = this.#tracer;
    let inFlight: string | undefined;
    let ended = false;
    return {
      method,
      era: start.era,
      traceId: traceIdOf(span),
      context,
      routed(target) {
        if (ended) return;
        Object.assign(attributes, targetAttributes(target));
        if (span.isRecording()) {
          span.updateName(spanName(method, target));
          span.setAttributes(targetAttributes(target));
        }
        if (method === 'tools/call' && inFlight === undefined) {
          inFlight = target.server;
          metrics.callInFlight(inFlight, start.era, 1);
        }
      },
      backendRequest: backend => startBackendRequest(metrics, tracer, backend, context),
      run: fn => contextApi.with(context, fn),
      end(result) {
        if (ended) return;
        ended = true;
        if (inFlight !== undefined) metrics.callInFlight(inFlight, start.era, -1);
        Object.assign(attributes, resultAttributes(result));
        metrics.recordServerOperation(secondsSince(started), attributes);
        finishSpan(span, result);
      },
    };
  }

  /**
   * Starts the telemetry of a backend request the broker makes on its own account (lists, the
   * event connection's handshake): a span of its own trace.
   */
  backendRequest(start: BackendRequestStart): BackendRequestTelemetry {
    return startBackendRequest(this.metrics, this.#tracer, start, undefined);
  }
}

function startBackendRequest(
  metrics: BrokerMetrics,
  tracer: BrokerTracer,
  start: BackendRequestStart,
  parent: Context | undefined,
): BackendRequestTelemetry {
  const started = performance.now();
  const method = boundedMethod(start.method);
  const attributes: Attributes = { [Attr.methodName]: method, ...targetAttributes(start) };
  if (start.era !== undefined) attributes[Attr.era] = start.era;
  if (start.protocolVersion !== undefined) attributes[Attr.protocolVersion] = start.protocolVersion;
  const { span, context } = tracer.startBackendRequest(
    spanName(method, start),
    spanAttributes(attributes),
    parent,
  );
  let ended = false;
  return {
    propagationFields: tracer.propagationFields(context),
    traceId: traceIdOf(span),
    end(result) {
      if (ended) return;
      ended = true;
      Object.assign(attributes, resultAttributes(result));
      metrics.recordClientOperation(secondsSince(started), attributes);
      finishSpan(span, result);
    },
  };
}

/** A span's attributes: the metric's, plus what only a span may carry (the request id). */
function spanAttributes(attributes: Attributes, requestId?: JsonRpcId): Attributes {
  const span: Attributes = { ...attributes };
  if (requestId !== undefined) span[Attr.requestId] = String(requestId);
  if (attributes[Attr.methodName] === 'tools/call') span[Attr.operationName] = 'execute_tool';
  return span;
}

function finishSpan(span: Span, result: RequestResult): void {
  if (span.isRecording()) {
    span.setAttributes(resultAttributes(result));
    if (result.code !== undefined) span.setAttribute(Attr.responseStatusCode, String(result.code));
  }
  endSpan(span, result.outcome !== 'succeeded', result.reason, result.exception);
}
