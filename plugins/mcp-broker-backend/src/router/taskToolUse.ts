/*
 * Whether a person may use a task's tool (docs/contracts/tasks-and-apps.md §2.8): the tool, by
 * the server's own name, is in the person's permitted catalog and routes to that very server.
 * One rule for every task operation and for every task notification at delivery.
 */
import { prefixedName } from '../broker/AggregatedCatalog';
import type { McpBroker } from '../broker/McpBroker';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';

/** `mcp-broker.tool.use` of `tool` (the server's own name) on `server`, as `catalog` permits. */
export function mayUseTaskTool(
  broker: McpBroker,
  catalog: PermittedCatalog,
  server: string,
  tool: string,
): boolean {
  const config = broker.server(server);
  const route = config && catalog.routeTool(prefixedName(config, tool));
  return route !== undefined && route.backend === server && route.originalName === tool;
}
