/*
 * One request of a call to its backend, as the call's client request observes it (spec §12):
 * measured (`mcp.client.operation.duration`) and traced as a CLIENT span under the client's
 * request span, whose trace context goes to the backend with the request (the channel hands it
 * to the transport: HTTP `traceparent` / `tracestate`). Both legs send through this, one span
 * per backend request (a 2026-07-28 backend's `input_required` rounds are one each).
 *
 * The request ends with what the backend answered (read by the same rule as the client's
 * answer), as cancelled when the call was ended for the client (cancelled, gone, shutdown,
 * removed), or as failed with the error that kept it from an answer (a timeout included).
 */
import { requestTargetOf } from '../telemetry/BrokerTelemetry';
import type { Era } from '../telemetry/telemetryAttributes';
import { errorTypeOfException, resultOfFinalMessage } from '../telemetry/requestResult';
import type { ToolCall } from './ToolCall';

/** The trace context fields a channel sends with the request (none when not traced). */
export type TraceContextFields = Readonly<Record<string, string>> | undefined;

/**
 * Runs `send` (the request to the backend and the reading of its answer) as one observed backend
 * request of `call`, in `era` and `protocolVersion`; `send` gets the trace context to pass on.
 */
export async function observedBackendRequest(
  call: ToolCall,
  era: Era,
  protocolVersion: string,
  send: (traceContext: TraceContextFields) => Promise<Record<string, unknown>>,
): Promise<Record<string, unknown>> {
  const telemetry = call.request.telemetry;
  if (telemetry === undefined) return send(undefined);
  const name = call.request.params.name;
  const observed = telemetry.backendRequest({
    ...requestTargetOf(call.method, call.backend, typeof name === 'string' ? name : undefined),
    method: call.method,
    era,
    protocolVersion,
  });
  try {
    const final = await send(observed.propagationFields);
    observed.end(resultOfFinalMessage(final));
    return final;
  } catch (error) {
    observed.end(
      call.endReason !== undefined && call.endReason !== 'timeout'
        ? resultOfFinalMessage(undefined)
        : { outcome: 'failed', errorType: errorTypeOfException(error), exception: error },
    );
    throw error;
  }
}
