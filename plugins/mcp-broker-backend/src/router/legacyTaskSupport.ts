/*
 * The tools a 2025-11-25 client is shown, with the task support the broker gives them
 * (docs/contracts/tasks-and-apps.md §2.2): a tool of a 2026-07-28 backend that declared the
 * tasks extension is listed with `execution: { taskSupport: "optional" }` — the backend decides
 * per call, and the broker answers a legacy client's `params.task` for it (§2.12.3).
 */
import type { McpBroker } from '../broker/McpBroker';
import { authOf } from '../identity/BackendCredentialProvider';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import { isPlainObject } from '../protocol/jsonRpc';
import { withTasksExtension } from '../protocol/modernTasks';

/** Capabilities of a client that takes tasks (how the modern relay is asked whether it relays). */
const TAKES_TASKS = withTasksExtension({});

/** `tools` of `catalog` as a 2025-11-25 client sees them (see the file comment). */
export function withLegacyTaskSupport(
  broker: McpBroker,
  catalog: PermittedCatalog,
  tools: readonly Record<string, unknown>[],
): Record<string, unknown>[] {
  return tools.map(tool => {
    const route = typeof tool.name === 'string' ? catalog.routeTool(tool.name) : undefined;
    const server = route && broker.server(route.backend);
    if (
      server === undefined ||
      // A person's own credential (spec §11) is not carried to task operations yet.
      authOf(server).mode !== 'broker' ||
      !broker.modernTasks.relays(server.name, TAKES_TASKS)
    ) {
      return tool;
    }
    const execution = isPlainObject(tool.execution) ? tool.execution : {};
    return { ...tool, execution: { ...execution, taskSupport: 'optional' } };
  });
}
