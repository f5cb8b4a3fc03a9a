/*
 * The router's side of long-running tasks (docs/contracts/tasks-and-apps.md §2.7–§2.9, §6):
 * parse → call the broker's task relay → respond. `tasks/get`, `tasks/result`, `tasks/cancel`
 * and `tasks/list` of 2025-11-25 sessions, and the task branch of a `tools/call` carrying
 * `params.task`. The caller's `mcp-broker.tool.use` of a task's tool is read from the permitted
 * catalog of this very request (the same decisions, cached at most 30 s, as `tools/call`).
 * With `mcpBroker.tasks.enabled: false` the methods are not found (E5) and a `task` parameter is
 * removed from calls (they run as plain calls).
 *
 * 2026-07-28 (the extension `io.modelcontextprotocol/tasks`, §2.12.2): `tasks/get`,
 * `tasks/update` and `tasks/cancel` of a client that declared the extension (the endpoint
 * refuses the others with E4 before their params are checked), answered as `complete` results,
 * whichever era the task's backend speaks (§2.12.4: CrossEraTaskRelay);
 * a `tools/call` of such a client to a backend that declared it too carries the relay's task
 * creation into the call machinery.
 */
import type { AuditedToolCall, ToolCallAuditor } from '../audit/ToolCallAuditor';
import { taskRefOf } from '../tasks/TaskAuditor';
import type { McpBroker } from '../broker/McpBroker';
import { authOf } from '../identity/BackendCredentialProvider';
import type { BrokerServerConfig } from '../config';
import { relayedCapabilities } from '../protocol/capabilities';
import {
  isPlainObject,
  jsonRpcError,
  jsonRpcResult,
  type JsonRpcId,
  type JsonRpcMessage,
} from '../protocol/jsonRpc';
import { completeResult } from '../protocol/modernResults';
import { withTasksExtension } from '../protocol/modernTasks';
import type { TaskCreation } from '../types';
import type { TaskCaller } from '../tasks/findOwnTask';
import type { TaskReply } from '../tasks/TaskReply';
import type { TaskInputClient } from '../tasks/EmulatedTaskInput';
import { withoutAppOriginHint } from './appCallRoutes';
import { callEndSignal } from './callEndSignal';
import { refuseStoreUnavailable } from './protocol';
import { mayUseTaskTool } from './taskToolUse';
import { endpointFieldOf, permittedCatalogOf, type McpRequest, type McpRoute } from './mcpRequest';

/**
 * The caller of a task operation, with the tool decisions of this request and the client
 * capabilities it declared (its session's, or its `_meta`'s).
 */
export function callerOf(broker: McpBroker, request: McpRequest): TaskCaller {
  const catalog = permittedCatalogOf(request);
  const traceId = request.telemetry?.traceId;
  const declared = request.session?.clientCapabilities ?? request.context?.clientCapabilities;
  return {
    principal: request.principal,
    mayUse: (server, tool, toolAnnotations) =>
      mayUseTaskTool(broker, catalog, server, tool, toolAnnotations),
    ...(traceId === undefined ? {} : { traceId }),
    ...(request.telemetry === undefined ? {} : { telemetry: request.telemetry }),
    era: request.era,
    capabilities: relayedCapabilities(declared ?? {}),
  };
}

/**
 * {@link callerOf}, for a 2025-11-25 session's request whose answer stream a task's backend may
 * ask on (a `tasks/result`, a task-creating `tools/call`; contract §2.12.1) until `signal` aborts.
 */
function askingCallerOf(broker: McpBroker, request: McpRequest, signal: AbortSignal): TaskCaller {
  const caller = callerOf(broker, request);
  const session = request.session;
  if (session === undefined) return caller;
  return {
    ...caller,
    askOn: backend =>
      broker.toolCalls.askOnTaskStream?.({
        clientSessionId: session.id,
        backend,
        response: request.writer,
        signal,
      }),
  };
}

/** The session of `request` as the client of its `tasks/result` stream's questions. */
function taskInputClientOf(request: McpRequest): TaskInputClient | undefined {
  const { session, writer } = request;
  if (session === undefined) return undefined;
  return {
    sessionId: session.id,
    capabilities: session.clientCapabilities,
    send: message => writer.send(message as JsonRpcMessage),
  };
}

/** The JSON-RPC message of a relay's reply to request `id`. */
function messageOf(id: JsonRpcId, reply: TaskReply) {
  return 'error' in reply
    ? jsonRpcError(id, reply.error.code, reply.error.message, reply.error.data)
    : jsonRpcResult(id, reply.result);
}

/**
 * `tasks/get`, `tasks/result` or `tasks/cancel` of one task. A `tasks/result` waits for the
 * task's end, asking its client on its stream what the task's backend asks meanwhile
 * (§2.12.1); its client going away aborts the wait, never the task.
 */
export function taskOperation(broker: McpBroker, operation: 'get' | 'result' | 'cancel') {
  return async (request: McpRequest): Promise<void> => {
    const { writer } = request;
    const ended = callEndSignal(writer.res, [broker.shutdownSignal]);
    if (operation === 'result') writer.holdForCall();
    try {
      // Whichever era the task's backend speaks (§2.12.3: CrossEraTaskRelay).
      const relay = broker.crossEraTasks;
      const caller =
        operation === 'result'
          ? askingCallerOf(broker, request, ended.signal)
          : callerOf(broker, request);
      const { taskId } = request.params;
      const reply =
        operation === 'result'
          ? // A modern backend's input is asked on this stream (§2.12.3).
            await relay.legacyResult(caller, taskId, ended.signal, taskInputClientOf(request))
          : await { get: relay.legacyGet, cancel: relay.legacyCancel }[operation].call(
              relay,
              caller,
              taskId,
              ended.signal,
            );
      writer.finish(messageOf(request.id!, reply), 'error' in reply ? reply.httpStatus : 200);
    } catch (error) {
      refuseStoreUnavailable(broker, writer, error, request.id!);
    } finally {
      ended.release();
    }
  };
}

/**
 * `tasks/get`, `tasks/update` or `tasks/cancel` of a 2026-07-28 client (which declared the tasks
 * extension: the method table requires it, E4): the relay's reply as a `complete` result.
 */
export function modernTaskOperation(broker: McpBroker, operation: 'get' | 'update' | 'cancel') {
  return async (request: McpRequest): Promise<void> => {
    const { writer, params } = request;
    const id = request.id!;
    const ended = callEndSignal(writer.res, [broker.shutdownSignal]);
    try {
      const caller = callerOf(broker, request);
      const reply =
        operation === 'update'
          ? await broker.crossEraTasks.update(
              caller,
              params.taskId,
              params.inputResponses as Record<string, unknown>,
              ended.signal,
            )
          : await broker.crossEraTasks[operation](caller, params.taskId, ended.signal);
      writer.answer(
        messageOf(id, 'error' in reply ? reply : { result: completeResult(reply.result) }),
        'error' in reply ? reply.httpStatus : 200,
      );
    } catch (error) {
      refuseStoreUnavailable(broker, writer, error, id);
    } finally {
      ended.release();
    }
  };
}

/** A task method served in both eras: `legacy` for a session's request, `modern` otherwise. */
export function byClientEra(
  legacy: (request: McpRequest) => Promise<void>,
  modern: (request: McpRequest) => Promise<void>,
) {
  return (request: McpRequest): Promise<void> =>
    request.era === 'modern' ? modern(request) : legacy(request);
}

/**
 * The task creation of a `tools/call` routed to `route`, a backend that declared the tasks
 * extension: of a 2026-07-28 client that declared it too (contract §2.12.2), of a 2025-11-25
 * client's call with `params.task` (§2.12.3: answered as a legacy task), or of a 2025-11-25
 * client's plain call (§2.12.3: the `-32021` fallback, the broker's own polled task); undefined
 * otherwise (a plain call).
 */
export function modernTaskCreationOf(
  broker: McpBroker,
  request: McpRequest,
  route: McpRoute,
  backend: BrokerServerConfig,
): TaskCreation | undefined {
  const legacyClient = request.era === 'legacy' && isPlainObject(request.params.task);
  const capabilities =
    request.era === 'legacy' ? withTasksExtension({}) : (request.context?.clientCapabilities ?? {});
  if (
    request.method !== 'tools/call' ||
    // A person's own credential (spec §11) is not carried to task operations yet.
    authOf(backend).mode !== 'broker' ||
    !broker.modernTasks.relays(backend.name, capabilities)
  ) {
    return undefined;
  }
  if (request.era === 'legacy' && !legacyClient) {
    // A plain call the backend may insist on running as a task (§2.12.3's -32021 fallback).
    return broker.modernTasks.plainCallCreation(backend.name);
  }
  const tool = broker.catalog().tools.find(item => item.name === request.params.name);
  const input = {
    server: route.backend,
    tool: route.name,
    ...(isPlainObject(tool?.annotations) ? { toolAnnotations: tool.annotations } : {}),
  };
  if (legacyClient) {
    const { ttl } = request.params.task as Record<string, unknown>;
    return broker.crossEraTasks.legacyCreation(callerOf(broker, request), {
      ...input,
      ...(typeof ttl === 'number' && Number.isFinite(ttl) && ttl >= 0 ? { ttl } : {}),
    });
  }
  return broker.modernTasks.creation(callerOf(broker, request), input);
}

/**
 * True when `request`, a 2025-11-25 task-augmented `tools/call` to a 2026-07-28 backend, was
 * refused with E7 (HTTP 429) because its caller's open tasks are at the bound (§2.6, §2.12.3).
 */
export async function refusedLegacyTaskAtBound(
  broker: McpBroker,
  request: McpRequest,
  route: McpRoute,
  backend: BrokerServerConfig,
): Promise<boolean> {
  if (
    request.era !== 'legacy' ||
    !isPlainObject(request.params.task) ||
    !modernTaskCreationOf(broker, request, route, backend)
  ) {
    return false;
  }
  const refusal = await broker.crossEraTasks.legacyCallRefusal(
    callerOf(broker, request),
    route.backend,
  );
  if (refusal === undefined || !('error' in refusal)) return false;
  request.writer.answer(messageOf(request.id!, refusal), refusal.httpStatus);
  return true;
}

/** `tasks/list`: the caller's tasks, from the broker's table. */
export function listTasks(broker: McpBroker) {
  return async (request: McpRequest): Promise<void> => {
    let reply: TaskReply;
    try {
      reply = await broker.tasks.list(callerOf(broker, request), request.params.cursor);
    } catch (error) {
      refuseStoreUnavailable(broker, request.writer, error, request.id!);
      return;
    }
    request.writer.answer(messageOf(request.id!, reply), 'error' in reply ? reply.httpStatus : 200);
  };
}

/** True when `request`, a routed `tools/call` to `backend`, is relayed as a task. */
export function isTaskCall(broker: McpBroker, request: McpRequest, backend: BrokerServerConfig) {
  return (
    request.era === 'legacy' &&
    isPlainObject(request.params.task) &&
    // A person's own credential (spec §11) is not carried to task operations yet.
    authOf(backend).mode === 'broker' &&
    broker.tasks.relays(backend.name)
  );
}

/**
 * The task branch of `tools/call` (contract §2.7 first row): one `mcp-broker.tool-call` event,
 * with the task's `taskRef` when a task was created (not when the backend answered at once or
 * with an error, nor at the bound), the relay's answer, HTTP 429 at the per-person bound.
 */
export async function createTask(
  broker: McpBroker,
  auditor: ToolCallAuditor,
  request: McpRequest,
  route: McpRoute,
  audited: AuditedToolCall,
): Promise<void> {
  const { params, writer } = request;
  const id = request.id!;
  const taskId = broker.tasks.newTaskId(route.backend);
  const audit = auditor.begin(audited, id);
  const ended = callEndSignal(writer.res, [broker.shutdownSignal]);
  let created = false;
  try {
    const tool = broker.catalog().tools.find(item => item.name === params.name);
    const reply = await broker.tasks.create(askingCallerOf(broker, request, ended.signal), {
      server: route.backend,
      tool: route.name,
      ...(isPlainObject(tool?.annotations) ? { toolAnnotations: tool.annotations } : {}),
      params: {
        ...withoutAppOriginHint(params, name => broker.server(name) !== undefined),
        name: route.name,
      },
      taskId,
      signal: ended.signal,
    });
    created =
      'result' in reply && isPlainObject(reply.result.task) && reply.result.task.taskId === taskId;
    const message = messageOf(id, reply);
    if ('error' in reply && reply.httpStatus !== 200) writer.answer(message, reply.httpStatus);
    else audit.observe(writer).finish(message);
  } catch (error) {
    refuseStoreUnavailable(broker, writer, error, id);
  } finally {
    ended.release();
    await audit.finish(created ? { taskRef: taskRefOf(taskId) } : {});
  }
}

/** The fields of a routed call's audit event (`endpoint` through a curated endpoint). */
export function auditedTaskCall(request: McpRequest, route: McpRoute): AuditedToolCall {
  const traceId = request.telemetry?.traceId;
  return {
    principal: request.principal,
    server: route.backend,
    tool: route.name,
    credentialMode: 'broker',
    ...(traceId === undefined ? {} : { traceId }),
    ...(request.grant === undefined ? {} : { grant: request.grant }),
    ...endpointFieldOf(request),
  };
}
