/**
 * The portal backend plugin for Backstage.
 *
 * @packageDocumentation
 */
export { portalPlugin as default } from './plugin';
export { portalRoutes, toOpenApiPath } from './router/routes';
export type { PortalRoute, PortalOperationId } from './router/routes';
