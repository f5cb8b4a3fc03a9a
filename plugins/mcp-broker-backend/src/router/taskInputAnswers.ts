/*
 * A 2025-11-25 session's answer to a task's input that the broker asked on a `tasks/result`
 * stream (docs/contracts/tasks-and-apps.md §2.12.3, tasks/EmulatedTaskInput.ts): taken here,
 * before the call machinery's answer router, on whichever replica the answer lands. The
 * `tasks/update` it becomes is a task operation of the answering person, so their tool
 * decisions are taken for it as for any task request (§2.8; the session's endpoint narrows them).
 */
import type { McpBroker } from '../broker/McpBroker';
import type { JsonRpcResponse } from '../protocol/jsonRpc';
import type { TaskCaller } from '../tasks/findOwnTask';
import type { ClientResponseOutcome } from '../types';
import type { McpRequest } from './mcpRequest';
import { accessOf, type PrincipalAccessDeps } from './principalAccess';
import { mayUseTaskTool } from './taskToolUse';

/**
 * What became of `message`, a session's response, when it answers a task input; undefined when
 * it answers something else (a call's request).
 */
export function answerTaskInput(
  deps: PrincipalAccessDeps & { broker: McpBroker },
  request: McpRequest,
  message: JsonRpcResponse,
): Promise<ClientResponseOutcome | undefined> {
  const { broker } = deps;
  const callerOf = async (): Promise<TaskCaller> => {
    const access = await accessOf(deps, request.req, request.writer.res);
    const catalog = (request.endpoint?.narrowAccess(access) ?? access).catalog;
    return {
      principal: request.principal,
      // The row's annotations decide for a tool that has left its server's list (§2.8).
      mayUse: (server, tool, toolAnnotations) =>
        mayUseTaskTool(broker, catalog, server, tool, toolAnnotations),
      era: 'legacy',
      ...(request.telemetry === undefined ? {} : { telemetry: request.telemetry }),
    };
  };
  return broker.crossEraTasks.input.answer(request.session!.id, message, callerOf);
}
