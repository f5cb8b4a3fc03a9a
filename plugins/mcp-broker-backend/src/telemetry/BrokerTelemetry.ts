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
import { clientRequestMethod } from '../protocol/mcpMethods';
import { BrokerMetrics, type BrokerGaugeSnapshot } from './BrokerMetrics';
import { BrokerTracer, endSpan, spanContextOf, traceIdOf, traceparentOf } from './BrokerTracer';
import type { TraceCarrier } from './traceContext';
import { resultOfFinalMessage, type RequestResult } from './requestResult';
import { Attr, boundedMethod, type AppCallResolution, type Era } from './telemetryAttributes';

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
  /** The curated endpoint it came through (spec §13); absent on the main endpoint. */
  endpoint?: string;
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
  /** The request's SERVER span as a W3C `traceparent` (undefined when tracing is off). */
  readonly traceparent: string | undefined;
  /** The request resolved to `target` (sets attributes; a `tools/call` counts as in flight). */
  routed(target: RequestTarget): void;
  /** A request to a backend made for this client request. */
  backendRequest(start: BackendRequestStart): BackendRequestTelemetry;
  /** Records the duration and ends the span (the first call counts). */
  end(result: RequestResult): void;
  /**
   * The request was answered with `final` (its final JSON-RPC response), or ended without one
   * (`undefined`: the client went away, the call was cancelled): ends it with what that says.
   */
  answered(final: unknown): void;
  /** A permission refused the request: counted, and the request ends `denied`. */
  denied(permission: string, code: number, server?: string): void;
  /**
   * A rate limit refused the request's call to `server`: counted (with where the limit comes
   * from), and it ends `rate-limited`.
   */
  rateLimited(server: string, code: number, reason: string, limitSource: 'config' | 'plan'): void;
  /** An app's call by a tool's own name was resolved as `resolution` (to `server`): counted. */
  appCall(resolution: AppCallResolution, server?: string): void;
  /**
   * Links the request's span to the span `traceparent` names (a task's creating request,
   * contract tasks-and-apps §2.14); an invalid value is ignored.
   */
  linkTo(traceparent: string): void;
  /**
   * Runs `fn` with the request's context active, so that what it does (log lines, backend
   * requests) belongs to the request's trace (with the SDK's async context manager).
   */
  run<T>(fn: () => T): T;
}

/** Seconds since `started` (a `performance.now()` reading). */
/**
 * What a request of `method` to `server` about the item `name` addresses: the server, and the
 * item's name when the method table says its kind is recorded (a tool's or prompt's own name,
 * bounded: names from the catalog; a resource's URI never is).
 */
export function requestTargetOf(method: string, server: string, name?: string): RequestTarget {
  const item = clientRequestMethod(method)?.item;
  if (name === undefined) return { server };
  if (item === 'tool') return { server, tool: name };
  if (item === 'prompt') return { server, prompt: name };
  return { server };
}

function secondsSince(started: number): number {
  return (performance.now() - started) / 1000;
}

/** Adds the target's attributes (server, tool or prompt) to `attributes`. */
function addTarget(attributes: Attributes, target: RequestTarget): void {
  attributes[Attr.server] = target.server;
  if (target.tool !== undefined) attributes[Attr.toolName] = target.tool;
  if (target.prompt !== undefined) attributes[Attr.promptName] = target.prompt;
}

/** Adds the result's attributes (the outcome, and `error.type` unless it succeeded). */
function addResult(attributes: Attributes, result: RequestResult): void {
  attributes[Attr.outcome] = result.outcome;
  if (result.errorType !== undefined) attributes[Attr.errorType] = result.errorType;
}

/** `tools/call echo`, as the semantic conventions name spans (`{method} {target}`). */
function spanName(method: string, target?: RequestTarget): string {
  const name = target?.tool ?? target?.prompt;
  return name === undefined ? method : `${method} ${name}`;
}

/**
 * Ends `span` with what only a span carries beyond the metric's attributes (the outcome, the
 * JSON-RPC code, the status and the exception).
 */
function finishSpan(span: Span, result: RequestResult): void {
  if (span.isRecording()) {
    const attributes: Attributes = {};
    addResult(attributes, result);
    if (result.code !== undefined) attributes[Attr.responseStatusCode] = String(result.code);
    span.setAttributes(attributes);
  }
  endSpan(span, result.outcome !== 'succeeded', result.reason, result.exception);
}

/** Longest client request id recorded on a span (the client chooses it; longer ones are cut). */
export const MAX_SPAN_REQUEST_ID_LENGTH = 128;

/**
 * A span's attributes: the metric's, plus what only a span may carry (the request id, cut to
 * {@link MAX_SPAN_REQUEST_ID_LENGTH} characters).
 */
function spanAttributes(attributes: Attributes, requestId?: JsonRpcId): Attributes {
  const span: Attributes = { ...attributes };
  if (requestId !== undefined) {
    span[Attr.requestId] = String(requestId).slice(0, MAX_SPAN_REQUEST_ID_LENGTH);
  }
  const operation = operationOf(attributes[Attr.methodName]);
  if (operation !== undefined) span[Attr.operationName] = operation;
  return span;
}

/** The `gen_ai.operation.name` of a (bounded) method, from the method table. */
function operationOf(method: unknown): string | undefined {
  return typeof method === 'string' ? clientRequestMethod(method)?.telemetry?.operation : undefined;
}

/** One backend request's duration and span. */
class BackendRequestObservation implements BackendRequestTelemetry {
  readonly propagationFields: Readonly<Record<string, string>>;
  readonly traceId: string | undefined;
  readonly #metrics: BrokerMetrics;
  readonly #span: Span;
  readonly #started = performance.now();
  readonly #attributes: Attributes;
  #ended = false;

  constructor(
    metrics: BrokerMetrics,
    tracer: BrokerTracer,
    start: BackendRequestStart,
    parent: Context | undefined,
  ) {
    this.#metrics = metrics;
    const method = boundedMethod(start.method);
    const attributes: Attributes = { [Attr.methodName]: method };
    addTarget(attributes, start);
    if (start.era !== undefined) attributes[Attr.era] = start.era;
    if (start.protocolVersion !== undefined) {
      attributes[Attr.protocolVersion] = start.protocolVersion;
    }
    this.#attributes = attributes;
    const started = tracer.startBackendRequest(
      spanName(method, start),
      spanAttributes(attributes),
      parent,
    );
    this.#span = started.span;
    this.traceId = traceIdOf(started.span);
    this.propagationFields = tracer.propagationFields(started.context);
  }

  end(result: RequestResult): void {
    if (this.#ended) return;
    this.#ended = true;
    addResult(this.#attributes, result);
    this.#metrics.recordClientOperation(secondsSince(this.#started), this.#attributes);
    finishSpan(this.#span, result);
  }
}

/** One client request's duration and span (a class: one object per request, no closures). */
class ClientRequestObservation implements ClientRequestTelemetry {
  readonly method: string;
  readonly era: Era;
  readonly traceId: string | undefined;
  readonly context: Context;
  readonly traceparent: string | undefined;
  readonly #metrics: BrokerMetrics;
  readonly #tracer: BrokerTracer;
  readonly #span: Span;
  readonly #started = performance.now();
  /** The metric's attributes, completed as the request goes (target, then result). */
  readonly #attributes: Attributes;
  #inFlight: string | undefined;
  #ended = false;

  constructor(metrics: BrokerMetrics, tracer: BrokerTracer, start: ClientRequestStart) {
    this.#metrics = metrics;
    this.#tracer = tracer;
    this.method = boundedMethod(start.method);
    this.era = start.era;
    const attributes: Attributes = { [Attr.methodName]: this.method, [Attr.era]: start.era };
    if (start.protocolVersion !== undefined) {
      attributes[Attr.protocolVersion] = start.protocolVersion;
    }
    if (start.endpoint !== undefined) attributes[Attr.endpoint] = start.endpoint;
    this.#attributes = attributes;
    const started = tracer.startClientRequest(
      this.method,
      spanAttributes(attributes, start.requestId),
      start.headers,
      start.meta,
    );
    this.#span = started.span;
    this.context = started.context;
    this.traceId = traceIdOf(started.span);
    this.traceparent = traceparentOf(started.span);
  }

  routed(target: RequestTarget): void {
    if (this.#ended) return;
    addTarget(this.#attributes, target);
    if (this.#span.isRecording()) {
      this.#span.updateName(spanName(this.method, target));
      const attributes: Attributes = {};
      addTarget(attributes, target);
      this.#span.setAttributes(attributes);
    }
    if (operationOf(this.method) === 'execute_tool' && this.#inFlight === undefined) {
      this.#inFlight = target.server;
      this.#metrics.callInFlight(target.server, this.era, 1);
    }
  }

  backendRequest(start: BackendRequestStart): BackendRequestTelemetry {
    return new BackendRequestObservation(this.#metrics, this.#tracer, start, this.context);
  }

  run<T>(fn: () => T): T {
    return contextApi.with(this.context, fn);
  }

  answered(final: unknown): void {
    if (!this.#ended) this.end(resultOfFinalMessage(final));
  }

  denied(permission: string, code: number, server?: string): void {
    if (this.#ended) return;
    this.#metrics.denied(this.method, permission, server);
    this.end({ outcome: 'denied', errorType: String(code), code, reason: `${permission} denied` });
  }

  rateLimited(server: string, code: number, reason: string, limitSource: 'config' | 'plan'): void {
    if (this.#ended) return;
    this.#metrics.rateLimited(server, this.era, limitSource);
    this.end({ outcome: 'rate-limited', errorType: String(code), code, reason });
  }

  appCall(resolution: AppCallResolution, server?: string): void {
    this.#metrics.appCall(resolution, server);
  }

  linkTo(traceparent: string): void {
    const context = spanContextOf(traceparent);
    if (context !== undefined && this.#span.isRecording()) this.#span.addLink({ context });
  }

  end(result: RequestResult): void {
    if (this.#ended) return;
    this.#ended = true;
    if (this.#inFlight !== undefined) this.#metrics.callInFlight(this.#inFlight, this.era, -1);
    addResult(this.#attributes, result);
    this.#metrics.recordServerOperation(secondsSince(this.#started), this.#attributes);
    finishSpan(this.#span, result);
  }
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
    return new ClientRequestObservation(this.metrics, this.#tracer, start);
  }

  /**
   * Starts the telemetry of a backend request the broker makes on its own account (lists, the
   * event connection's handshake): a span of its own trace.
   */
  backendRequest(start: BackendRequestStart): BackendRequestTelemetry {
    return new BackendRequestObservation(this.metrics, this.#tracer, start, undefined);
  }
}
