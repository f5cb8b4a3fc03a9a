/**
 * Permissions, resource types, API types and a typed client of the portal backend plugin.
 * The REST contract has one source here: the zod schemas of what a client sends and what
 * the server answers, and the operation table that names them (`portalOperations`); the
 * types, the client and the backend's OpenAPI document are derived from it.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './constants';
export * from './mcpTargets';
export * from './requestSchemas';
export * from './resourceSchemas';
export * from './responseSchemas';
export * from './portalOperations';
export * from './types';
export * from './PortalClient';
export * from './events';
