/*
 * Log lines that belong to a request carry its trace id: a logger that adds `traceId` (and
 * `spanId`) of the active span to every line's metadata. The request's code runs inside its
 * context (ClientRequestTelemetry.run), so with the SDK's async context manager the line of a
 * backend failure deep in a tool call names the trace to look at; lines outside any request
 * (start-up, the backends' event connections) are left as they are, as is every line when no
 * SDK is registered.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { JsonObject } from '@backstage/types';
import { trace } from '@opentelemetry/api';

type LogMeta = Error | JsonObject | undefined;

/** The active span's ids, or undefined outside a recorded or propagated span. */
function activeTraceFields(): { traceId: string; spanId: string } | undefined {
  const span = trace.getActiveSpan();
  if (span === undefined) return undefined;
  const { traceId, spanId } = span.spanContext();
  return trace.isSpanContextValid(span.spanContext()) ? { traceId, spanId } : undefined;
}

/** `logger` for a line now: a child carrying the active trace's ids, when there is one. */
function lineLogger(logger: LoggerService): LoggerService {
  const fields = activeTraceFields();
  return fields === undefined ? logger : logger.child(fields);
}

/** `logger`, adding the active trace's ids to every line; see the file comment. */
export function withTraceIds(logger: LoggerService): LoggerService {
  return {
    error: (message: string, meta?: LogMeta) => lineLogger(logger).error(message, meta),
    warn: (message: string, meta?: LogMeta) => lineLogger(logger).warn(message, meta),
    info: (message: string, meta?: LogMeta) => lineLogger(logger).info(message, meta),
    debug: (message: string, meta?: LogMeta) => lineLogger(logger).debug(message, meta),
    child: meta => withTraceIds(logger.child(meta)),
  };
}
