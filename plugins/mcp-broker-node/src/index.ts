/**
 * Extension points of the MCP broker backend plugin (`@devportal/plugin-mcp-broker-backend`):
 * sources of access grants.
 *
 * @packageDocumentation
 */
export {
  mcpAccessGrantsExtensionPoint,
  type McpAccessGrant,
  type McpAccessGrantLimit,
  type McpAccessGrantSource,
  type McpAccessGrantWriter,
  type McpAccessGrantsExtensionPoint,
} from './accessGrants';
