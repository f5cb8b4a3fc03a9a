/*
 * The one place where failures talking to a backend MCP server become what the client sees:
 * the error vocabulary of the backend layer, and its mapping to JSON-RPC errors.
 *
 * Two kinds of traffic fail here, with the messages clients have always seen for each:
 * - requests over the broker's own backend session (prompts/get, resources/read, completion,
 *   the lists; see BackendConnection and StreamableHttpClient): BackendRpcError (the backend's
 *   own JSON-RPC error), BackendUnavailableError and BackendSessionLostError, mapped by
 *   {@link toClientError};
 * - tool calls and client answers over per-client backend sessions (ToolCallForwarder):
 *   BackendCallError with a `reason`, mapped by {@link BackendCallError.toJsonRpcError} (which
 *   {@link toClientError} also uses).
 * Messages name the backend, never its credentials.
 *
 * Policy (deliberate):
 * - A backend's own JSON-RPC error and its `isError` tool results are the backend's answer: they
 *   pass through unchanged (only the id is the client's).
 * - Everything that prevented the broker from getting an answer — an HTTP error status, a network
 *   error, a broken or truncated stream, an unusable message, the call timeout — becomes a
 *   JSON-RPC error with the client's id, a message that names the backend and says what happened,
 *   and (for tool calls) `data: { backend, reason }` for programs. These are not `isError` results
 *   because the tool may never have run (or its outcome is unknown), which is not a tool-level
 *   failure a model could reason about.
 * Codes follow the SDK's `ErrorCode`: -32001 (request timeout), -32000 (connection closed) and
 * -32603 (internal error) for the rest.
 */

import { JsonRpcErrorCode, JsonRpcErrorObject } from '../protocol/jsonRpc';

/** The backend answered a request with a JSON-RPC error; passed to the client as it is. */
export class BackendRpcError extends Error {
  constructor(
    readonly backend: string,
    readonly error: JsonRpcErrorObject,
  ) {
    super(`backend ${backend} answered with error ${error.code}: ${error.message}`);
    this.name = 'BackendRpcError';
  }
}

/** The backend could not be reached, timed out, or answered outside the protocol. */
export class BackendUnavailableError extends Error {
  /** What happened, without the backend's name (the message is `backend <name>: <detail>`). */
  readonly detail: string;

  constructor(
    readonly backend: string,
    message: string,
    readonly status?: number,
  ) {
    super(`backend ${backend}: ${message}`);
    this.name = 'BackendUnavailableError';
    this.detail = message;
  }
}

/**
 * The backend answered with a 2xx status but not with a usable MCP message (another content
 * type, invalid JSON, no matching JSON-RPC response, a message over the size limit): unlike a
 * network failure, evidence that something answers there, perhaps in another protocol revision.
 */
export class BackendProtocolError extends BackendUnavailableError {
  constructor(backend: string, message: string) {
    super(backend, message);
    this.name = 'BackendProtocolError';
  }
}

/**
 * The backend no longer knows the broker's session (404, or 400 from servers that answer
 * unknown sessions that way): the connection must re-initialize before anything else.
 */
export class BackendSessionLostError extends BackendUnavailableError {
  constructor(backend: string, status: number) {
    super(backend, `session not found (HTTP ${status}); re-initializing`, status);
    this.name = 'BackendSessionLostError';
  }
}

/**
 * A backend sent more than the message size limit without completing a message (raised by the
 * transport's reader, see `readBackendMessages`).
 */
export class BackendMessageTooLargeError extends Error {
  readonly name = 'BackendMessageTooLargeError';
  constructor(readonly limitBytes: number) {
    super(`a message larger than ${limitBytes} bytes`);
  }
}

/** JSON-RPC error codes the broker uses for backend failures. */
const BackendErrorCodes = {
  /** The backend closed the connection or the stream before answering. */
  connectionClosed: JsonRpcErrorCode.ConnectionClosed,
  /** The call exceeded `mcpBroker.toolCallTimeout`. */
  requestTimeout: JsonRpcErrorCode.RequestTimeout,
  /** Any other failure to obtain an answer from the backend. */
  internalError: JsonRpcErrorCode.InternalError,
} as const;

/** Why a backend call failed, as reported in the error's `data.reason`. */
export type BackendFailureReason =
  | 'http-status'
  | 'unreachable'
  | 'stream-ended'
  | 'connection-lost'
  | 'malformed-response'
  | 'timeout'
  | 'session-lost'
  | 'shutting-down'
  | 'task-result'
  | 'too-many-input-rounds';

/** Reasons reported with code `connectionClosed`. */
const CONNECTION_CLOSED_REASONS = new Set<BackendFailureReason>([
  'stream-ended',
  'connection-lost',
  'shutting-down',
]);

/** A failure to get an answer from a backend; {@link BackendCallError.toJsonRpcError} maps it. */
export class BackendCallError extends Error {
  readonly name = 'BackendCallError';

  constructor(
    readonly backend: string,
    readonly reason: BackendFailureReason,
    message: string,
    readonly httpStatus?: number,
  ) {
    super(message);
  }

  /** The JSON-RPC `error` member the client receives. */
  toJsonRpcError(): { code: number; message: string; data: Record<string, unknown> } {
    let code: number = BackendErrorCodes.internalError;
    if (this.reason === 'timeout') code = BackendErrorCodes.requestTimeout;
    else if (CONNECTION_CLOSED_REASONS.has(this.reason)) code = BackendErrorCodes.connectionClosed;
    const data: Record<string, unknown> = { backend: this.backend, reason: this.reason };
    if (this.httpStatus !== undefined) data.httpStatus = this.httpStatus;
    if (this.reason === 'shutting-down') data.retryable = true;
    return { code, message: this.message, data };
  }
}

/** Maps a non-2xx HTTP answer of a backend to a {@link BackendCallError}. */
export function backendHttpError(backend: string, status: number): BackendCallError {
  if (status === 401 || status === 403) {
    return new BackendCallError(
      backend,
      'http-status',
      `MCP server "${backend}" rejected the broker's credentials (HTTP ${status}); check mcpBroker.servers[].headers`,
      status,
    );
  }
  if (status === 404) {
    return new BackendCallError(
      backend,
      'session-lost',
      `MCP server "${backend}" no longer knows the broker's session (HTTP 404)`,
      status,
    );
  }
  return new BackendCallError(
    backend,
    'http-status',
    `MCP server "${backend}" answered HTTP ${status}`,
    status,
  );
}

/**
 * Maps anything thrown while talking to a backend (a socket error, a stream
 * reset, an abort) to a {@link BackendCallError}. `streamStarted` tells a refused connection from
 * one that broke while the backend was answering.
 */
export function backendFailure(
  backend: string,
  error: unknown,
  streamStarted: boolean,
): BackendCallError {
  if (error instanceof BackendCallError) return error;
  if (error instanceof BackendMessageTooLargeError) {
    return backendMalformedResponse(
      backend,
      `a message larger than the broker's limit of ${error.limitBytes} bytes`,
    );
  }
  const detail = describeCause(error);
  if (!streamStarted) {
    return new BackendCallError(
      backend,
      'unreachable',
      `MCP server "${backend}" is unreachable (${detail})`,
    );
  }
  return new BackendCallError(
    backend,
    'connection-lost',
    `the connection to MCP server "${backend}" broke during the call (${detail})`,
  );
}

/** The call's stream ended without a result. */
export function backendStreamEnded(backend: string): BackendCallError {
  return new BackendCallError(
    backend,
    'stream-ended',
    `MCP server "${backend}" ended the call's stream without sending a result`,
  );
}

/** The backend's final answer could not be used. */
export function backendMalformedResponse(backend: string, what: string): BackendCallError {
  return new BackendCallError(
    backend,
    'malformed-response',
    `MCP server "${backend}" sent ${what}`,
  );
}

/** A 2026-07-28 backend answered a call with a task (the tasks extension, not relayed). */
export function backendReturnedTask(backend: string): BackendCallError {
  return new BackendCallError(
    backend,
    'task-result',
    `MCP server "${backend}" returned a task; the broker does not relay the tasks extension`,
  );
}

/** A 2026-07-28 backend kept answering `input_required` past the broker's round limit. */
export function backendTooManyInputRounds(backend: string, rounds: number): BackendCallError {
  return new BackendCallError(
    backend,
    'too-many-input-rounds',
    `MCP server "${backend}" still asked for input after ${rounds} rounds; the call was ended`,
  );
}

/** The call exceeded `mcpBroker.toolCallTimeout`. */
export function backendTimeout(backend: string, timeoutMs: number): BackendCallError {
  return new BackendCallError(
    backend,
    'timeout',
    `the call to MCP server "${backend}" exceeded the broker's tool call timeout of ${formatMs(timeoutMs)} (mcpBroker.toolCallTimeout)`,
  );
}

/**
 * The broker shut down (its drain deadline, `mcpBroker.shutdownDrainTimeout`, passed) before the
 * call finished: the client may send the call again, to another replica or after the restart.
 */
export function brokerShuttingDown(backend: string): BackendCallError {
  return new BackendCallError(
    backend,
    'shutting-down',
    `the MCP broker is shutting down and stopped the call to MCP server "${backend}" ` +
      'before it finished; the call may be retried',
  );
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

function describeCause(error: unknown): string {
  // The socket error's code (ECONNREFUSED, ECONNRESET, …) is what helps; fetch wraps it in `cause`.
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && code !== 'ABORT_ERR') return code;
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (cause && typeof cause.code === 'string') return cause.code;
  if (cause && typeof cause.message === 'string') return cause.message;
  if (error instanceof Error) return error.message;
  return String(error);
}

/** Maps an error from any backend request to the JSON-RPC error a client receives. */
export function toClientError(error: unknown): JsonRpcErrorObject {
  if (error instanceof BackendRpcError) return error.error;
  if (error instanceof BackendCallError) return error.toJsonRpcError();
  if (error instanceof BackendUnavailableError) {
    return { code: JsonRpcErrorCode.InternalError, message: error.message };
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return { code: JsonRpcErrorCode.InternalError, message: 'request aborted' };
  }
  return { code: JsonRpcErrorCode.InternalError, message: 'internal error in the broker' };
}
