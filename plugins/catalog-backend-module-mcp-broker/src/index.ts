/**
 * A catalog backend module that publishes the MCP broker's servers as catalog entities of kind
 * API, `spec.type: mcp-server`.
 *
 * @packageDocumentation
 */
export { catalogModuleMcpBrokerEntityProvider as default } from './module';
export {
  McpBrokerEntityProvider,
  MCP_BROKER_ENTITY_PROVIDER_NAME,
  type McpBrokerEntityProviderOptions,
} from './McpBrokerEntityProvider';
export {
  MAX_DEFINITION_BYTES,
  mcpEntityName,
  serverDefinition,
  serverToEntity,
  type ServerEntityOptions,
} from './serverEntity';
