/**
 * The developer portal frontend plugin for Backstage's new frontend system: API products, key
 * requests with a one-time secret, approvals, product management, Kuadrant policies, the "API
 * access" and "MCP server" entity cards and the MCP broker's tools. The legacy system's exports are in
 * `@devportal/plugin-portal/legacy`.
 *
 * @packageDocumentation
 */
export { default } from './plugin';
export { rootRouteRef, mcpRouteRef, connectionsRouteRef } from './routes';
export * from './apis';
export {
  API_PRODUCT_ANNOTATION,
  ApiAccessCard,
  type ApiAccessCardProps,
  isPortalApiEntity,
} from './components/ApiAccessCard/ApiAccessCard';
export {
  isMcpServerEntity,
  McpServerCard,
  type McpServerCardProps,
} from './components/McpServerCard/McpServerCard';
