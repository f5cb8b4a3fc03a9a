/*
 * Errors of the broker's backend (upstream) traffic, and the one place where they become
 * JSON-RPC errors for clients. Messages name the backend, never its credentials.
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
  constructor(
    readonly backend: string,
    message: string,
    readonly status?: number,
  ) {
    super(`backend ${backend}: ${message}`);
    this.name = 'BackendUnavailableError';
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

/** Maps an error from a backend request to the JSON-RPC error a client receives. */
export function toClientError(error: unknown): JsonRpcErrorObject {
  if (error instanceof BackendRpcError) return error.error;
  if (error instanceof BackendUnavailableError) {
    return { code: JsonRpcErrorCode.InternalError, message: error.message };
  }
  if (error instanceof Error && error.name === 'AbortError') {
    return { code: JsonRpcErrorCode.InternalError, message: 'request aborted' };
  }
  return { code: JsonRpcErrorCode.InternalError, message: 'internal error in the broker' };
}
