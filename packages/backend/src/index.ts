/*
 * The development and test backend: a real Backstage backend (new backend system)
 * with auth, catalog, the RBAC permission backend and this repository's two plugins.
 */
import { createBackend } from '@backstage/backend-defaults';

const backend = createBackend();

backend.add(import('@backstage/plugin-auth-backend'));
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));
backend.add(import('@backstage/plugin-auth-backend-module-oauth2-proxy-provider'));
backend.add(import('@backstage/plugin-catalog-backend'));
// The RBAC plugin *is* the permission backend (plugin id `permission`).
backend.add(import('@backstage-community/plugin-rbac-backend'));

backend.add(import('@devportal/plugin-portal-backend'));
backend.add(import('@devportal/plugin-mcp-broker-backend'));

backend.start();
