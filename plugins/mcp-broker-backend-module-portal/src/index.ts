/**
 * The MCP broker's portal module: the developer portal's approved access requests for MCP
 * products become the broker's access grants (docs/contracts/mcp-access.md §5.2).
 *
 * @packageDocumentation
 */
export { mcpBrokerModulePortalAccessGrants as default } from './module';
export {
  APPLY_BUDGET_MS,
  PortalGrantSource,
  type PortalGrantSourceOptions,
} from './PortalGrantSource';
export { accessGrantOf } from './accessGrantOf';
