/*
 * The one refusal for "the broker's shared store cannot be reached" (the session store, the task
 * table: the database with several replicas), whichever step meets it: HTTP 503 with
 * Retry-After, a JSON-RPC error the client may retry, the cause in the log only.
 */
import { JsonRpcErrorCode, type JsonRpcErrorObject } from './jsonRpc';

/** `data.reason` of the refusal, which lets a step give it its HTTP status (503). */
export const STORE_UNAVAILABLE_REASON = 'store-unavailable';

/** The JSON-RPC error of the refusal (answered with HTTP 503 and Retry-After). */
export const STORE_UNAVAILABLE_ERROR: JsonRpcErrorObject = {
  code: JsonRpcErrorCode.InternalError,
  message: 'The MCP broker cannot reach its session store right now; retry shortly',
  data: { reason: STORE_UNAVAILABLE_REASON },
};
