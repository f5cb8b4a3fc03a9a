/**
 * The portal's pages, card and APIs for apps still on Backstage's legacy frontend system: mount
 * `PortalPage` at `/portal` and `McpToolsPage` at `/mcp` in the app's routes, and put
 * `EntityApiAccessCard` on the API entity page.
 *
 * @packageDocumentation
 */
export { EntityApiAccessCard, McpToolsPage, PortalPage, portalPlugin } from './legacyPlugin';
