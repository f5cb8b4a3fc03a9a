/*
 * The simplest ToolCallHandler: forwards `tools/call` over the broker's own session with the
 * backend and answers the client with the result as plain JSON. No progress, elicitation or
 * cancellation relay (those need per-client backend sessions; see the calls module). Client
 * responses are answered 404 because this handler never issues server→client requests.
 */
import { toClientError } from '../upstream/errors';
import { JsonRpcErrorCode, jsonRpcError, jsonRpcResult } from '../protocol/jsonRpc';
import type {
  ClientNotificationContext,
  ClientResponseContext,
  ToolCallContext,
  ToolCallHandler,
  ToolCallHandlerDeps,
} from '../types';

/** Creates the forwarding handler (a {@link ToolCallHandlerFactory}). */
export function createForwardingToolCallHandler(deps: ToolCallHandlerDeps): ToolCallHandler {
  const inFlight = new Map<string, Set<AbortController>>();

  return {
    async handleToolCall({ clientSession, backend, request, reply, signal }: ToolCallContext) {
      const connection = deps.backendSessions.get(backend.name);
      if (!connection) {
        const message = `backend ${backend.name} is not configured`;
        reply.json(jsonRpcError(request.id, JsonRpcErrorCode.InternalError, message));
        return;
      }
      const controller = new AbortController();
      const calls = inFlight.get(clientSession.id) ?? new Set();
      inFlight.set(clientSession.id, calls);
      calls.add(controller);
      try {
        const result = await connection.request('tools/call', request.params, {
          signal: AbortSignal.any([signal, controller.signal]),
          timeoutMs: deps.config.toolCallTimeoutMs,
        });
        if (!reply.answered) reply.json(jsonRpcResult(request.id, result));
      } catch (error) {
        if (!reply.answered) {
          reply.json({ jsonrpc: '2.0', id: request.id, error: toClientError(error) });
        }
      } finally {
        calls.delete(controller);
        if (calls.size === 0) inFlight.delete(clientSession.id);
      }
    },

    async handleClientResponse({ message, reply }: ClientResponseContext) {
      reply.json(
        jsonRpcError(message.id, JsonRpcErrorCode.InvalidParams, 'no pending request with this id'),
        404,
      );
    },

    async handleClientNotification(_context: ClientNotificationContext) {
      // Cancellation is not relayed by this handler; the call runs to its end or timeout.
    },

    async closeClientSession(sessionId: string) {
      for (const controller of inFlight.get(sessionId) ?? []) controller.abort();
      inFlight.delete(sessionId);
    },

    async removeBackend() {
      // Calls to a removed backend fail when its connection closes.
    },

    async close() {
      for (const calls of inFlight.values()) for (const controller of calls) controller.abort();
      inFlight.clear();
    },
  };
}
