/*
 * The development and test backend: a real Backstage backend (new backend system)
 * with auth, catalog, the RBAC permission backend, events, notifications, signals and
 * Backstage's own MCP server (mcp-actions, with the catalog's actions), and
 * this repository's plugins (the portal, the broker and the catalog module that publishes
 * the portal's API products as API entities).
 */
import { createBackend } from '@backstage/backend-defaults';
import { rootHttpRouterServiceFactory } from '@backstage/backend-defaults/rootHttpRouter';
import { budgetedDatabaseServiceFactory } from './database/budgetedDatabaseServiceFactory';
import { PLUGIN_OWN_POOLS } from './database/pluginOwnPools';
import { retryAfterOnUnavailable } from './http/retryAfterOnUnavailable';

const backend = createBackend();

// Backstage's database service, plus a warning at start when PostgreSQL's max_connections
// cannot hold this replica's connection pools (docs/deployment.md, "Database connections").
backend.add(budgetedDatabaseServiceFactory({ ownPools: PLUGIN_OWN_POOLS }));

// Backstage's root HTTP router, plus `Retry-After` on every 503 that lacks one: Backstage's own
// refuse a plugin's requests while it stops or starts (docs/deployment.md, "Stopping").
backend.add(
  rootHttpRouterServiceFactory({
    configure({ app, applyDefaults }) {
      app.use(retryAfterOnUnavailable());
      applyDefaults();
    },
  }),
);

backend.add(import('@backstage/plugin-auth-backend'));
backend.add(import('@backstage/plugin-auth-backend-module-guest-provider'));
backend.add(import('@backstage/plugin-auth-backend-module-oauth2-proxy-provider'));
backend.add(import('@backstage/plugin-catalog-backend'));
// Published API products of the portal as API entities (full sync + the portal's events).
backend.add(import('@devportal/plugin-catalog-backend-module-portal'));
// The MCP broker's servers as API entities of type mcp-server (contract mcp-access §2).
backend.add(import('@devportal/plugin-catalog-backend-module-mcp-broker'));
// The RBAC plugin *is* the permission backend (plugin id `permission`).
backend.add(import('@backstage-community/plugin-rbac-backend'));
// RBAC as published reads each plugin's permission metadata once at start: it starts only once
// those plugins are up (docs/deployment.md, "Starting").
backend.add(import('@devportal/plugin-permission-backend-module-await-plugins'));
// Events cross plugins (the portal → the catalog module) and, on PostgreSQL, replicas.
backend.add(import('@backstage/plugin-events-backend'));
backend.add(import('@backstage/plugin-notifications-backend'));
backend.add(import('@backstage/plugin-signals-backend'));
// Backstage's own MCP server with the catalog's actions (behind the broker as server `backstage`).
backend.add(import('@backstage/plugin-mcp-actions-backend'));

backend.add(import('@devportal/plugin-portal-backend'));
backend.add(import('@devportal/plugin-mcp-broker-backend'));
// The portal's approved access requests for MCP products become the broker's access grants.
backend.add(import('@devportal/plugin-mcp-broker-backend-module-portal'));

backend.start();
