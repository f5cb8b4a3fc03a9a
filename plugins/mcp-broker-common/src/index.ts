/**
 * Permissions, resource types, resource refs and the REST contract (`brokerOperations`) of the
 * MCP broker backend plugin (`@devportal/plugin-mcp-broker-backend`), for policies, frontends
 * and other backends.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './resourceRefs';
export * from './catalog';
export * from './toolChanges';
export * from './servers';
export * from './status';
export * from './credentials';
export * from './events';
export * from './usage';
export * from './brokerOperations';
export * from './McpBrokerClient';
