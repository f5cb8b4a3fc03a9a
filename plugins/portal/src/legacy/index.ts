/**
 * The portal's pages, card and APIs for apps still on Backstage's legacy frontend system: mount
 * `PortalPage` at `/portal`, `McpToolsPage` at `/mcp` and `ConnectionsPage` at `/connections` in
 * the app's routes, and put `EntityApiAccessCard` and `EntityMcpServerCard` on the API entity
 * page.
 *
 * @packageDocumentation
 */
export {
  ConnectionsPage,
  EntityApiAccessCard,
  EntityMcpServerCard,
  McpToolsPage,
  PortalPage,
  portalPlugin,
} from './legacyPlugin';
