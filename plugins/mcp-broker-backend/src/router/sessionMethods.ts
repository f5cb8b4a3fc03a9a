/*
 * The session era's own methods: `initialize` (a new client session bound to the principal,
 * spec §2), and the methods the broker deliberately does not serve (it relays neither log levels
 * nor resource subscriptions) or does not know.
 */
import type { McpBroker } from '../broker/McpBroker';
import { JsonRpcErrorCode, jsonRpcError, jsonRpcResult } from '../protocol/jsonRpc';
import {
  BROKER_IMPLEMENTATION,
  BROKER_INSTRUCTIONS,
  isSupportedProtocolVersion,
  LATEST_PROTOCOL_VERSION,
} from '../protocol/versions';
import { boundSessionInit } from '../sessions/boundedSessionInit';
import { ClientSession, SessionLimitError } from '../sessions/ClientSessionRegistry';
import { endpointFieldOf, type McpRequest } from './mcpRequest';
import { refuseStoreUnavailable, refuseSessionLimit } from './protocol';

/**
 * `initialize`: a new session for the principal, within the session limits; its id goes back in
 * `Mcp-Session-Id`. (The admission chain has refused one sent with a session id, and one by a
 * principal without `mcp-broker.session.create`.)
 */
export function initialize(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    const { params, writer } = request;
    const id = request.id!;
    const bounded = boundSessionInit(params);
    if (!bounded.ok) {
      writer.refuse(400, JsonRpcErrorCode.InvalidParams, bounded.message, id);
      return;
    }
    const requested = params.protocolVersion;
    const protocolVersion = isSupportedProtocolVersion(requested)
      ? requested
      : LATEST_PROTOCOL_VERSION;
    let session: ClientSession;
    try {
      session = await broker.sessions.create({
        principal: request.principal,
        protocolVersion,
        ...bounded.init,
        ...endpointFieldOf(request),
      });
    } catch (error) {
      if (error instanceof SessionLimitError) refuseSessionLimit(writer, error, id);
      else refuseStoreUnavailable(broker, writer, error, id);
      return;
    }
    writer.res.setHeader('Mcp-Session-Id', session.id);
    writer.answer(
      jsonRpcResult(id, {
        protocolVersion,
        capabilities: broker.serverCapabilities(request.endpoint?.servers),
        // Through a curated endpoint: its own name, title and instructions (spec §13).
        serverInfo: request.endpoint?.serverInfo ?? BROKER_IMPLEMENTATION,
        instructions:
          request.endpoint === undefined ? BROKER_INSTRUCTIONS : request.endpoint.instructions,
      }),
    );
  };
}

/** A method the broker deliberately does not serve (-32601, saying so). */
export async function unsupported(request: McpRequest): Promise<void> {
  request.writer.answer(
    jsonRpcError(
      request.id!,
      JsonRpcErrorCode.MethodNotFound,
      `${request.method} is not supported by the MCP broker`,
    ),
  );
}

/** A method the session era does not have (-32601, in band). */
export async function methodNotFound(request: McpRequest): Promise<void> {
  request.writer.answer(
    jsonRpcError(
      request.id!,
      JsonRpcErrorCode.MethodNotFound,
      `method "${request.method!.slice(0, 100)}" not found`,
    ),
  );
}
