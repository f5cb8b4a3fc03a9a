/*
 * A client's stream as a listener of its person's task notifications (contract §2.10 "Fan-out"):
 * what TaskNotifications needs of it, with the §2.8 re-check at delivery. One helper for the
 * legacy GET streams and the 2026-07-28 listen streams.
 */
import type { TaskStatusStream } from '../tasks/TaskNotifications';
import type { ClientEventStream } from '../types';
import type { McpRequest } from './mcpRequest';
import { credentialKeyOf, type PrincipalAccessDeps } from './principalAccess';
import { mayUseTaskTool } from './taskToolUse';

/**
 * A client stream (a session's GET stream, a listen stream) as a listener of its person's tasks:
 * a notification is sent only when the person may still open sessions and use the task's tool
 * through the stream's endpoint, by the same decision (cached per credential) a `tools/call` of
 * theirs would get now (§2.8).
 */
export function taskStatusStreamOf(
  deps: PrincipalAccessDeps,
  request: McpRequest,
  stream: ClientEventStream,
): TaskStatusStream {
  const { broker } = deps;
  const { req, principal, endpoint } = request;
  const credential = credentialKeyOf(req, principal);
  return {
    send: message => stream.send(message),
    get closed() {
      return stream.closed;
    },
    mayUse: async (server, tool, toolAnnotations) => {
      const access = await deps.access.forCredential(credential, broker.catalog(), () =>
        deps.httpAuth.credentials(req, { allow: ['user', 'service'] }),
      );
      const seen = endpoint?.narrowAccess(access) ?? access;
      return (
        seen.mayCreateSession && mayUseTaskTool(broker, seen.catalog, server, tool, toolAnnotations)
      );
    },
  };
}
