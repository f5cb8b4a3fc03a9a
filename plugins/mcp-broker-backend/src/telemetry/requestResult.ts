/*
 * How one request ended, read from the final JSON-RPC message the broker answered it with (or
 * the lack of one). The one reading shared by the metrics, the spans and the audit trail, so the
 * three never disagree about whether a call failed. Nothing of a result's content is kept: only
 * whether it was an error, and which code.
 */
import { isPlainObject } from '../protocol/jsonRpc';
import {
  CANCELLED_ERROR_TYPE,
  errorTypeOfCode,
  OTHER_VALUE,
  TOOL_ERROR_TYPE,
  type Outcome,
} from './telemetryAttributes';

/** How a request ended. */
export interface RequestResult {
  readonly outcome: Outcome;
  /** The semantic conventions' `error.type` (absent when it succeeded). */
  readonly errorType?: string;
  /** The JSON-RPC error code, when the answer was one. */
  readonly code?: number;
  /** Why it did not succeed, in words that hold no result content (audit, span status). */
  readonly reason?: string;
  /** The error that ended it, when one was thrown (recorded on the span). */
  readonly exception?: unknown;
}

/** A request that succeeded. */
export const SUCCEEDED: RequestResult = Object.freeze({ outcome: 'succeeded' });

/**
 * The result of a request answered with `final` (a JSON-RPC response), or ended without one
 * (`undefined`: the client went away, cancelled, or the broker shut down). A JSON-RPC error and
 * a tool result with `isError: true` both count as `failed`.
 */
export function resultOfFinalMessage(final: unknown): RequestResult {
  if (!isPlainObject(final)) {
    return {
      outcome: 'cancelled',
      errorType: CANCELLED_ERROR_TYPE,
      reason: 'the call ended without a result (cancelled, client gone, or shutdown)',
    };
  }
  if (isPlainObject(final.error)) {
    const code = typeof final.error.code === 'number' ? final.error.code : Number.NaN;
    return failedWithCode(code);
  }
  const result = final.result;
  if (isPlainObject(result) && result.isError === true) {
    return {
      outcome: 'failed',
      errorType: TOOL_ERROR_TYPE,
      reason: 'the tool reported an error (isError)',
    };
  }
  return SUCCEEDED;
}

/** A request answered with the JSON-RPC error `code`. */
export function failedWithCode(code: number): RequestResult {
  return {
    outcome: 'failed',
    errorType: errorTypeOfCode(code),
    code,
    reason: `JSON-RPC error ${Number.isFinite(code) ? code : 'without a code'}`,
  };
}

/**
 * The `error.type` of a thrown error: its class name (a bounded set: the broker's own error
 * classes and Node's), or `_OTHER` for anything that is not an Error.
 */
export function errorTypeOfException(error: unknown): string {
  return error instanceof Error ? error.name : OTHER_VALUE;
}
