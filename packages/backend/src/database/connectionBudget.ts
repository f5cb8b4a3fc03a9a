/*
 * How many PostgreSQL connections one backend replica may open, against how many the server
 * lets it have (docs/deployment.md, "Database connections").
 *
 * Each plugin that uses the database gets its own knex client with its own pool (one database
 * per plugin), and a few plugins open pools of their own beside it. A pool opens connections as
 * requests need them, up to its `max`; under a burst every pool of every replica can reach its
 * `max` at once. When the sum passes what the server allows, the server refuses new connections
 * ("sorry, too many clients already") and requests fail instead of waiting for a connection.
 *
 * The arithmetic, per replica: Σ pool max. For the deployment: replicas × Σ pool max, plus
 * headroom for migrations, admin sessions and a replica starting during a rolling update, must
 * stay within `max_connections − superuser_reserved_connections − reserved_connections`.
 */
import type { Config } from '@backstage/config';

/** knex's own default pool size, when neither the base nor the plugin's knexConfig sets one. */
export const KNEX_DEFAULT_POOL_MAX = 10;

/** One connection pool a replica may fill. */
export interface ConnectionPool {
  /** Who opens it, e.g. `portal` or `permission (RBAC's casbin adapter)`. */
  name: string;
  /** Most connections it opens at once. */
  max: number;
}

/** What the server allows a non-superuser client (from `SHOW`). */
export interface ServerConnectionLimits {
  maxConnections: number;
  /** `superuser_reserved_connections` plus, from PostgreSQL 16, `reserved_connections`. */
  reserved: number;
}

/** This replica's pools measured against the server's limits. */
export interface ConnectionBudget {
  pools: readonly ConnectionPool[];
  /** Σ pool max: what this replica alone may open. */
  replicaMax: number;
  /** Connections the server accepts from ordinary roles. */
  available: number;
  /** False when this replica's pools alone can exceed what the server accepts. */
  fits: boolean;
}

/**
 * The `max` of the pool Backstage's DatabaseManager builds for `pluginId`: its
 * `backend.database.plugin.<id>.knexConfig` merged over `backend.database.knexConfig`, as the
 * DatabaseManager merges them, else knex's default.
 */
export function configuredPoolMax(databaseConfig: Config, pluginId: string): number {
  const pluginMax = databaseConfig.getOptionalNumber(`plugin.${pluginId}.knexConfig.pool.max`);
  return (
    pluginMax ?? databaseConfig.getOptionalNumber('knexConfig.pool.max') ?? KNEX_DEFAULT_POOL_MAX
  );
}

/** The database client (`pg`, `better-sqlite3`, …) Backstage uses for `pluginId`. */
export function clientOf(databaseConfig: Config, pluginId: string): string {
  return (
    databaseConfig.getOptionalString(`plugin.${pluginId}.client`) ??
    databaseConfig.getString('client')
  );
}

/** Adds the pools up and compares them with the server's limits. */
export function connectionBudget(
  pools: readonly ConnectionPool[],
  limits: ServerConnectionLimits,
): ConnectionBudget {
  const replicaMax = pools.reduce((sum, pool) => sum + pool.max, 0);
  const available = limits.maxConnections - limits.reserved;
  return { pools, replicaMax, available, fits: replicaMax <= available };
}

/** The pools as `name max` pairs, largest first, for a log line. */
export function describePools(pools: readonly ConnectionPool[]): string {
  return [...pools]
    .sort((a, b) => b.max - a.max || a.name.localeCompare(b.name))
    .map(pool => `${pool.name} ${pool.max}`)
    .join(', ');
}
