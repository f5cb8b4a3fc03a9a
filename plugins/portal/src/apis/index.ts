export { portalApiRef, type PortalApi } from './PortalApi';
export {
  mcpBrokerApiRef,
  type McpBrokerApi,
  type McpBrokerStatus,
  type McpConnection,
  type McpBackendStatus,
} from './McpBrokerApi';
export { McpBrokerClient } from './McpBrokerClient';
