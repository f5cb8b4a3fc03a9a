/*
 * The router's side of a 2026-07-28 `tools/call` to a 2025-11-25 backend that takes tasks
 * (docs/contracts/tasks-and-apps.md §2.12.4): a `required` tool called without the declared
 * extension is refused before anything is sent (`-32021`, HTTP 400); a call of an `optional` or
 * `required` tool by a declaring client goes to the CrossEraTaskRelay, and its answer (a
 * `resultType: "task"` answer with the broker id, or the backend's plain answer as a `complete`
 * result) is written through the call's audit, so the `tool-call` event records its `taskRef`.
 */
import type { ToolCallAuditRecord } from '../audit/ToolCallAuditor';
import type { McpBroker } from '../broker/McpBroker';
import type { BrokerServerConfig } from '../config';
import { authOf } from '../identity/BackendCredentialProvider';
import { isPlainObject, jsonRpcError, jsonRpcResult } from '../protocol/jsonRpc';
import { completeResult } from '../protocol/modernResults';
import { legacyTaskSupportOf } from '../protocol/taskEraMapping';
import type { ModernCallToLegacy } from '../tasks/CrossEraTaskRelay';
import { withoutAppOriginHint } from './appCallRoutes';
import { brokerUiUriWriter } from './brokerUiUriWriter';
import { callEndSignal } from './callEndSignal';
import type { McpRequest, McpRoute } from './mcpRequest';
import { refuseStoreUnavailable } from './protocol';
import { callerOf } from './taskMethods';

/** How the routed 2026-07-28 `tools/call` `request` to `backend` goes (plain for a legacy client). */
export function legacyTaskCallOf(
  broker: McpBroker,
  request: McpRequest,
  route: McpRoute,
  backend: BrokerServerConfig,
): ModernCallToLegacy {
  if (
    request.era !== 'modern' ||
    // A person's own credential (spec §11) is not carried to task operations yet.
    authOf(backend).mode !== 'broker' ||
    broker.connection(backend.name)?.era !== 'legacy'
  ) {
    return { kind: 'plain' };
  }
  const tool = broker.catalog().tools.find(item => item.name === request.params.name);
  return broker.crossEraTasks.modernCallToLegacy(
    route.backend,
    request.context?.clientCapabilities ?? {},
    legacyTaskSupportOf(tool),
  );
}

/**
 * Relays `request` (see {@link legacyTaskCallOf}: `task`) as a legacy task and writes its answer
 * through `audit`. False when nothing was sent and the call is to run as a plain call (the
 * person's open-task bound is reached and the tool may run without a task).
 */
export async function relayLegacyTaskCall(
  broker: McpBroker,
  request: McpRequest,
  route: McpRoute,
  audit: ToolCallAuditRecord,
): Promise<boolean> {
  const { params, writer } = request;
  const id = request.id!;
  const ended = callEndSignal(writer.res, [broker.shutdownSignal]);
  try {
    const tool = broker.catalog().tools.find(item => item.name === params.name);
    const { task: _ignored, ...routed } = withoutAppOriginHint(
      params,
      name => broker.server(name) !== undefined,
    );
    const reply = await broker.crossEraTasks.create(callerOf(broker, request), {
      server: route.backend,
      tool: route.name,
      taskSupport: legacyTaskSupportOf(tool),
      ...(isPlainObject(tool?.annotations) ? { toolAnnotations: tool.annotations } : {}),
      params: { ...routed, name: route.name },
      taskId: broker.tasks.newTaskId(route.backend),
      signal: ended.signal,
    });
    if (reply === undefined) return false;
    if ('error' in reply) {
      const message = jsonRpcError(id, reply.error.code, reply.error.message, reply.error.data);
      // E7 leaves with its HTTP status; other errors in band, as the call's final answer.
      if (reply.httpStatus !== 200) writer.answer(message, reply.httpStatus);
      else audit.observe(writer).finish(message);
    } else {
      const { result } = reply;
      brokerUiUriWriter(route.backend, audit.observe(writer)).finish(
        jsonRpcResult(id, result.resultType === 'task' ? result : completeResult(result)),
      );
    }
  } catch (error) {
    refuseStoreUnavailable(broker, writer, error, id);
  } finally {
    ended.release();
  }
  return true;
}
