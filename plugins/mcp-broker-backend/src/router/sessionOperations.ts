/*
 * A session's two transport operations, served once the admission chain (admission.ts) has
 * bound the request to its session (spec §2):
 *
 * - GET: the session's event stream, one per session on every replica (the stream lease lives in
 *   the possibly shared store): 406 without `Accept: text/event-stream`, 409 while the session
 *   has a stream open here or elsewhere, 503 when the store fails. While it is open it hears of
 *   its person's tasks (`notifications/tasks/status`, contract tasks-and-apps §2.10), each
 *   checked against the person's current permission decision at delivery.
 * - DELETE: ends the session (on every replica), its streams and its backend sessions: 204.
 */
import type { McpBroker } from '../broker/McpBroker';
import { endpointViewer } from '../endpoints/EndpointListViews';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import type { ClientEventStream } from '../types';
import type { McpRequest } from './mcpRequest';
import { credentialKeyOf, type PrincipalAccessDeps } from './principalAccess';
import { refuseStoreUnavailable } from './protocol';
import { openBrokerEventStream } from './SseClientStream';
import { taskStatusStreamOf } from './taskStatusStream';

/** GET /mcp: opens the admitted request's session's event stream; see the file comment. */
export async function openSessionStream(
  deps: PrincipalAccessDeps,
  request: McpRequest,
): Promise<void> {
  const { broker } = deps;
  const { req, writer, principal, endpoint } = request;
  const { res } = writer;
  const session = request.session!;
  if (!(req.headers.accept ?? '').includes('text/event-stream')) {
    writer.refuse(406, JsonRpcErrorCode.InvalidRequest, 'GET needs Accept: text/event-stream');
    return;
  }
  // The same rule on every replica: the stream lease lives in the (possibly shared) store.
  let stream: ClientEventStream | 'already-open';
  try {
    stream = await broker.sessions.attachEventStream(
      session,
      () => openBrokerEventStream(broker, res, { 'Mcp-Session-Id': session.id }),
      error =>
        // Not fatal: an unreleased lease lapses by itself (STREAM_LEASE_MS).
        broker.logger.warn(`MCP broker: could not release a client stream's lease: ${error}`),
      endpointViewer(credentialKeyOf(req, principal), endpoint?.name),
    );
  } catch (error) {
    refuseStoreUnavailable(broker, writer, error);
    return;
  }
  if (stream === 'already-open') {
    writer.refuse(
      409,
      JsonRpcErrorCode.InvalidRequest,
      'This session already has an open GET stream; close it before opening another',
    );
    return;
  }
  // The stream may stay open for hours and nothing calls next() on it: drop Express's chain
  // of routing closures (req.next → every router's restore state, ~5 KiB per stream).
  req.next = undefined;
  // The client may have gone while the lease was taken: then no close event will come.
  if (res.destroyed) {
    stream.close();
    return;
  }
  const open = stream;
  const stopListening = broker.taskNotifications.listen(
    principal,
    taskStatusStreamOf(deps, request, open),
  );
  open.signal.addEventListener('abort', stopListening, { once: true });
}

/** DELETE /mcp: ends the admitted request's session; see the file comment. */
export async function endClientSession(broker: McpBroker, request: McpRequest): Promise<void> {
  await broker.endSession(request.session!);
  request.writer.res.status(204).end();
}
