/*
 * Connections the development backend's plugins open themselves, outside Backstage's database
 * service, which the budget check cannot see (read from their sources):
 * - the RBAC plugin (@backstage-community/plugin-rbac-backend 6.1.0, service/policy-builder and
 *   database/casbin-adapter-factory) builds a DatabaseManager of its own for the `permission`
 *   database and another for the catalog's (group membership look-ups), each with the pool
 *   size `backend.database` gives those plugins, and a TypeORM pool for its casbin adapter,
 *   sized by `backend.database.knexConfig.pool.max` (pg's default, 10, when unset);
 * - the events backend (@backstage/plugin-events-backend 0.6, DatabaseEventBusStore) holds one
 *   raw connection outside its pool for `LISTEN`;
 * - the MCP broker (plugins/mcp-broker-backend/src/store/PostgresNotifications.ts) holds one
 *   too, shared by its replica bus (`mcpBroker.sessionStore: database`) and its access grant
 *   index (when a module adds a grant source), unless `mcpBroker.signalNotifications` is false
 *   (counted whenever the broker uses PostgreSQL: the budget is what a replica may open).
 */
import { configuredPoolMax, KNEX_DEFAULT_POOL_MAX } from './connectionBudget';
import type { OwnPool } from './budgetedDatabaseServiceFactory';

/**
 * The RBAC, events and MCP broker plugins' own connections (counted when their plugin uses
 * PostgreSQL).
 */
export const PLUGIN_OWN_POOLS: readonly OwnPool[] = [
  {
    name: "permission (RBAC's own client)",
    pluginId: 'permission',
    max: database => configuredPoolMax(database, 'permission'),
  },
  {
    name: "catalog (RBAC's client)",
    pluginId: 'permission',
    max: database => configuredPoolMax(database, 'catalog'),
  },
  {
    name: "permission (RBAC's casbin adapter)",
    pluginId: 'permission',
    max: database => database.getOptionalNumber('knexConfig.pool.max') ?? KNEX_DEFAULT_POOL_MAX,
  },
  { name: 'events (LISTEN)', pluginId: 'events', max: () => 1 },
  { name: 'mcp-broker (LISTEN)', pluginId: 'mcp-broker', max: () => 1 },
];
