/*
 * The MCP endpoint's refusals that more than one step gives (codes and versions: `protocol/`),
 * each written through the request's ResponseWriter, and the one reading of a request header.
 */
import type { Request } from 'express';
import type { McpBroker } from '../broker/McpBroker';
import { JsonRpcErrorCode, jsonRpcError, type JsonRpcId } from '../protocol/jsonRpc';
import { STORE_UNAVAILABLE_ERROR } from '../protocol/storeUnavailable';
import type { SessionLimitError } from '../sessions/ClientSessionRegistry';
import type { ResponseWriter } from './ResponseWriter';

/** The first value of a request header (Node joins most repeated headers, not all). */
export function headerValue(req: Request, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The broker drains before shutting down: new work is refused; the client may retry elsewhere. */
export function refuseShuttingDown(writer: ResponseWriter, id: JsonRpcId | null = null): void {
  writer.res.setHeader('Retry-After', '1');
  writer.refuse(
    503,
    JsonRpcErrorCode.ServerError,
    'The MCP broker is shutting down; send the request again (on another replica, or later)',
    id,
  );
}

/**
 * The session store (the shared database with several replicas) failed: the client may retry,
 * so 503 with a JSON-RPC body; the cause goes to the log, not to the client.
 */
export function refuseStoreUnavailable(
  broker: Pick<McpBroker, 'logger'>,
  writer: ResponseWriter,
  error: unknown,
  id: JsonRpcId | null = null,
): void {
  broker.logger.warn(`MCP broker: the session store is unavailable: ${error}`);
  const { code, message, data } = STORE_UNAVAILABLE_ERROR;
  const refusal = jsonRpcError(id, code, message, data);
  // A call's stream may be open already (a waiting tasks/result): the error goes into it.
  if (writer.answered) writer.finish(refusal);
  else writer.answer(refusal, 503);
}

/** A session limit is reached (the message names it). */
export function refuseSessionLimit(
  writer: ResponseWriter,
  error: SessionLimitError,
  id: JsonRpcId | null = null,
): void {
  writer.refuse(429, JsonRpcErrorCode.ServerError, error.message, id);
}
