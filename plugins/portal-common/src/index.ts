/**
 * Permissions, resource types and API types of the portal backend plugin.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './types';
export * from './PortalClient';
export * from './events';
