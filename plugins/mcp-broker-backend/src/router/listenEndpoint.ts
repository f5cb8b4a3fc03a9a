/*
 * `subscriptions/listen` for 2026-07-28 clients (spec §9): parse the filter → admit the stream
 * under the limits → answer with an SSE stream owned by the broker. The request pipeline calls
 * it after the request metadata and the permission gate passed, like every other method. What
 * the stream carries, and when it ends, is ListenSubscriptions' business; this file only maps
 * the outcomes to HTTP (400 for a malformed filter, 429 at a limit, 503 while the broker shuts
 * down) and hands the response over as a ClientEventStream. A filter naming `taskIds` (contract
 * §2.10, listenTaskIds.ts) is checked before anything is opened; the stream then hears of the
 * agreed tasks through TaskNotifications, until it closes.
 */
import { endpointViewer } from '../endpoints/EndpointListViews';
import type { McpBroker } from '../broker/McpBroker';
import { JsonRpcErrorCode } from '../protocol/jsonRpc';
import { advertisedListKinds } from '../protocol/listKinds';
import { honouredFilter, readSubscriptionFilter } from '../protocol/modernResults';
import type { McpRequest } from './mcpRequest';
import { credentialKeyOf, type PrincipalAccessDeps } from './principalAccess';
import { refuseShuttingDown, refuseStoreUnavailable } from './protocol';
import { agreedTaskIds } from './listenTaskIds';
import { callerOf } from './taskMethods';
import { taskStatusStreamOf } from './taskStatusStream';
import { openBrokerEventStream } from './SseClientStream';

/** What the listen handler needs of the broker. */
type ListenBroker = Pick<
  McpBroker,
  | 'listenStreams'
  | 'serverCapabilities'
  | 'openEventStream'
  | 'taskNotifications'
  | 'taskStore'
  | 'server'
  | 'config'
  | 'auditTaskOperation'
>;

/**
 * The `subscriptions/listen` handler: answers with the request's stream, or with an error that
 * says what to fix. Resolves once the stream is open (it lives on after that).
 */
export function serveListen(deps: PrincipalAccessDeps) {
  return (request: McpRequest) => listen(deps, request);
}

async function listen(deps: PrincipalAccessDeps, request: McpRequest): Promise<void> {
  const broker: ListenBroker = deps.broker;
  const { principal, writer, req } = request;
  const id = request.id!;
  const res = writer.res;
  const requested = readSubscriptionFilter(request.params);
  if ('invalid' in requested) {
    writer.refuse(400, JsonRpcErrorCode.InvalidParams, requested.invalid, id);
    return;
  }
  // What the broker can deliver is what it advertises (tools always: it announces removals).
  const honoured = honouredFilter(
    requested,
    advertisedListKinds(broker.serverCapabilities(request.endpoint?.servers)),
  );
  let taskIds: ReadonlySet<string> | undefined;
  if (requested.taskIds !== undefined) {
    let checked: Awaited<ReturnType<typeof agreedTaskIds>>;
    try {
      checked = await agreedTaskIds(
        broker,
        callerOf(deps.broker, request),
        request.context?.clientCapabilities,
        requested.taskIds,
      );
    } catch (error) {
      refuseStoreUnavailable(deps.broker, writer, error, id);
      return;
    }
    if ('refusal' in checked) {
      const { refusal } = checked;
      writer.refuse(refusal.httpStatus, refusal.code, refusal.message, id, refusal.data);
      return;
    }
    honoured.filter.taskIds = checked.agreed;
    taskIds = new Set(checked.agreed);
  }
  const opened = broker.listenStreams.open({
    principal,
    viewer: endpointViewer(credentialKeyOf(req, principal), request.endpoint?.name),
    subscriptionId: id,
    honoured,
    openStream: () => openBrokerEventStream(broker, res),
  });
  if ('refused' in opened) {
    // The drain began after the admission chain's own check (nothing waits in between today).
    if (opened.refused === 'shutting-down') refuseShuttingDown(writer, id);
    else writer.refuse(429, JsonRpcErrorCode.ServerError, opened.message, id);
    return;
  }
  // The stream may stay open for hours and nothing calls next() on it: drop Express's chain of
  // routing closures, as for the session GET streams.
  req.next = undefined;
  // The client may have gone before the stream opened: then no close event will come.
  if (res.destroyed) {
    opened.stream.close();
    return;
  }
  if (taskIds !== undefined && taskIds.size > 0 && !opened.stream.closed) {
    const stopListening = broker.taskNotifications.listen(
      principal,
      taskStatusStreamOf(deps, request, opened.stream),
      { subscriptionId: id, taskIds },
    );
    opened.stream.signal.addEventListener('abort', stopListening, { once: true });
  }
}
