/**
 * Permissions, resource types and resource refs of the MCP broker backend plugin
 * (`@devportal/plugin-mcp-broker-backend`), for policies, frontends and other backends.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './resourceRefs';
export * from './catalog';
export * from './toolChanges';
export * from './servers';
export * from './events';
export * from './McpBrokerClient';
export * from './usage';
