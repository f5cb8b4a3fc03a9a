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
import { isPlainObject, jsonRpcError, JsonRpcErrorCode, jsonRpcResult } from '../protocol/jsonRpc';
import { completeResult, readInputRetry } from '../protocol/modernResults';
import { type RequestStateBinding, RequestStateRefusal } from '../inputRequests/RequestStateSealer';
import { legacyTaskSupportOf } from '../protocol/taskEraMapping';
import type { ModernCallToLegacy } from '../tasks/CrossEraTaskRelay';
import type { TaskCreationRun } from '../tasks/TaskCreationRounds';
import type { TaskReply } from '../tasks/TaskReply';
import { withoutAppOriginHint } from './appCallRoutes';
import { brokerUiUriWriter } from './brokerUiUriWriter';
import { callEndSignal } from './callEndSignal';
import { endpointFieldOf, type McpRequest, type McpRoute } from './mcpRequest';
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
  const retry = readInputRetry(params);
  if ('invalid' in retry) {
    writer.refuse(400, JsonRpcErrorCode.InvalidParams, retry.invalid, id);
    return true;
  }
  const ended = callEndSignal(writer.res, [broker.shutdownSignal]);
  try {
    const tool = broker.catalog().tools.find(item => item.name === params.name);
    const {
      task: _ignored,
      inputResponses: _responses,
      requestState: _state,
      ...routed
    } = withoutAppOriginHint(params, name => broker.server(name) !== undefined);
    // What the backend asks before its task exists becomes input rounds (TaskCreationRounds).
    const binding: RequestStateBinding = {
      principal: request.principal,
      method: 'tools/call',
      name: `${route.backend}/${route.name}`,
      arguments: params.arguments,
      ...endpointFieldOf(request),
    };
    const create: TaskCreationRun = (askOn, signal) =>
      broker.crossEraTasks.create(
        { ...callerOf(broker, request), ...(askOn === undefined ? {} : { askOn }) },
        {
          server: route.backend,
          tool: route.name,
          taskSupport: legacyTaskSupportOf(tool),
          ...(isPlainObject(tool?.annotations) ? { toolAnnotations: tool.annotations } : {}),
          params: { ...routed, name: route.name },
          taskId: broker.tasks.newTaskId(route.backend),
          signal,
        },
      );
    const rounds = broker.taskCreationRounds;
    let reply: TaskReply | undefined;
    try {
      reply =
        retry.requestState === undefined
          ? await rounds.start(route.backend, binding, ended.signal, create)
          : await rounds.resume(binding, retry, ended.signal);
    } catch (error) {
      if (!(error instanceof RequestStateRefusal)) throw error;
      const refusal = error.toModernError();
      writer.refuse(refusal.httpStatus, refusal.code, refusal.message, id, refusal.data);
      return true;
    }
    if (reply === undefined) return false;
    if ('error' in reply) {
      const message = jsonRpcError(id, reply.error.code, reply.error.message, reply.error.data);
      // E7 leaves with its HTTP status; other errors in band, as the call's final answer.
      if (reply.httpStatus !== 200) writer.answer(message, reply.httpStatus);
      else audit.observe(writer).finish(message);
    } else {
      const { result } = reply;
      const final = result.resultType === 'task' || result.resultType === 'input_required';
      brokerUiUriWriter(route.backend, audit.observe(writer)).finish(
        jsonRpcResult(id, final ? result : completeResult(result)),
      );
    }
  } catch (error) {
    refuseStoreUnavailable(broker, writer, error, id);
  } finally {
    ended.release();
  }
  return true;
}
