/*
 * Whether a person may use a task's tool (docs/contracts/tasks-and-apps.md §2.8): the tool, by
 * the server's own name, is in the person's permitted catalog and routes to that very server.
 * A tool that has left its server's list is decided on the entry the task's row keeps (server,
 * tool, the annotations it had at the task's creation), with the same decision and conditions.
 * One rule for every task operation and for every task notification at delivery.
 */
import { prefixedName } from '../broker/AggregatedCatalog';
import type { McpBroker } from '../broker/McpBroker';
import { isPlainObject } from '../protocol/jsonRpc';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';

/**
 * `mcp-broker.tool.use` of `tool` (the server's own name) on `server`, as `catalog` permits;
 * `toolAnnotations` (the row's JSON) decide a tool the server no longer lists.
 */
export function mayUseTaskTool(
  broker: McpBroker,
  catalog: PermittedCatalog,
  server: string,
  tool: string,
  toolAnnotations?: string,
): boolean {
  const config = broker.server(server);
  if (config === undefined) return false;
  const brokerName = prefixedName(config, tool);
  const listed = broker.connection(server)?.cachedLists.tools.some(item => item.name === tool);
  if (!listed) {
    const annotations = annotationsOf(toolAnnotations);
    return catalog.mayUseUnlistedTool(brokerName, {
      server,
      name: tool,
      ...(annotations === undefined ? {} : { annotations }),
    });
  }
  const route = catalog.routeTool(brokerName);
  return route !== undefined && route.backend === server && route.originalName === tool;
}

/** The annotations a row keeps (JSON); undefined when none or unreadable. */
function annotationsOf(json: string | undefined): Record<string, unknown> | undefined {
  if (json === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(json);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}
