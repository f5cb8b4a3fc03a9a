/*
 * Backstage's database service (the same DatabaseManager, the same config) plus one check at
 * start: when every plugin is up, it adds up the connection pools this replica may fill and
 * warns if the PostgreSQL server's `max_connections` cannot hold them (connectionBudget.ts).
 *
 * Why here: only the database service sees every plugin that asks for a database, so it is the
 * one place that can add their pools up; a plugin checking its own pool cannot see the other
 * nine. Pools a plugin opens itself, outside this service, cannot be seen here and are passed
 * in as `ownPools` (pluginOwnPools.ts).
 *
 * The check never fails the start: a deployment may have a bigger server than the one it
 * starts against, or fewer replicas than it could. It logs the figures either way, so that the
 * operator can multiply by the replica count (docs/deployment.md, "Database connections").
 */
import {
  coreServices,
  createServiceFactory,
  type DatabaseService,
  type LoggerService,
} from '@backstage/backend-plugin-api';
import { DatabaseManager } from '@backstage/backend-defaults/database';
import { ConfigReader, type Config } from '@backstage/config';
import {
  clientOf,
  configuredPoolMax,
  connectionBudget,
  describePools,
  type ConnectionPool,
  type ServerConnectionLimits,
} from './connectionBudget';

/** A pool a plugin opens itself, beside the one the database service gives it. */
export interface OwnPool {
  /** Named in the log, e.g. `permission (RBAC's casbin adapter)`. */
  name: string;
  /** The plugin whose database (and client type) it uses. */
  pluginId: string;
  /** Its size under `backend.database`. */
  max(databaseConfig: Config): number;
}

/** Options of {@link budgetedDatabaseServiceFactory}. */
export interface BudgetedDatabaseOptions {
  /** Pools opened outside the database service, counted when their plugin asks for a database. */
  ownPools?: readonly OwnPool[];
}

async function serverLimits(database: DatabaseService): Promise<ServerConnectionLimits> {
  const knex = await database.getClient();
  // `reserved_connections` exists from PostgreSQL 16; current_setting(…, true) is NULL before.
  const result = await knex.raw(
    `SELECT current_setting('max_connections')::int AS max_connections,
            current_setting('superuser_reserved_connections')::int
              + coalesce(current_setting('reserved_connections', true), '0')::int AS reserved`,
  );
  const row = result.rows[0] as { max_connections: number; reserved: number };
  return { maxConnections: row.max_connections, reserved: row.reserved };
}

function checkBudget(
  logger: LoggerService,
  pools: ConnectionPool[],
  limits: ServerConnectionLimits,
): void {
  const budget = connectionBudget(pools, limits);
  const figures =
    `this replica's ${pools.length} connection pools may open ${budget.replicaMax} ` +
    `connections (${describePools(pools)}); the server accepts ${budget.available} ` +
    `(max_connections ${limits.maxConnections} minus ${limits.reserved} reserved)`;
  if (budget.fits) {
    logger.info(
      `PostgreSQL connection budget: ${figures}. Replicas × ${budget.replicaMax} plus ` +
        'headroom for migrations and admin must stay within that (docs/deployment.md)',
    );
    return;
  }
  logger.warn(
    `PostgreSQL cannot hold this replica's connection pools: ${figures}. Under load requests ` +
      'will fail with "too many clients already". Lower backend.database.knexConfig.pool.max ' +
      "(or a plugin's own under backend.database.plugin.<id>.knexConfig), or raise " +
      'max_connections; docs/deployment.md, "Database connections", has the arithmetic',
  );
}

/**
 * The database service with the connection budget check; add it to the backend before the
 * plugins (`backend.add(budgetedDatabaseServiceFactory(...))`) to replace the default one.
 */
export function budgetedDatabaseServiceFactory(options: BudgetedDatabaseOptions = {}) {
  return createServiceFactory({
    service: coreServices.database,
    deps: {
      config: coreServices.rootConfig,
      rootLifecycle: coreServices.rootLifecycle,
      rootLogger: coreServices.rootLogger,
      lifecycle: coreServices.lifecycle,
      logger: coreServices.logger,
      pluginMetadata: coreServices.pluginMetadata,
    },
    async createRootContext({ config, rootLifecycle, rootLogger }) {
      // Without backend.database, Backstage's own factory uses SQLite in memory; so does this one.
      const databaseConfig =
        config.getOptionalConfig('backend.database') ??
        new ConfigReader({ client: 'better-sqlite3', connection: ':memory:' });
      const manager = DatabaseManager.fromConfig(
        config.has('backend.database')
          ? config
          : new ConfigReader({ backend: { database: databaseConfig.get() } }),
        { rootLifecycle, rootLogger },
      );
      const postgresPlugins = new Map<string, DatabaseService>();
      rootLifecycle.addStartupHook(async () => {
        const [first] = postgresPlugins.values();
        if (first === undefined) return;
        const pools: ConnectionPool[] = [...postgresPlugins.keys()].map(pluginId => ({
          name: pluginId,
          max: configuredPoolMax(databaseConfig, pluginId),
        }));
        for (const own of options.ownPools ?? []) {
          if (postgresPlugins.has(own.pluginId))
            pools.push({ name: own.name, max: own.max(databaseConfig) });
        }
        const logger = rootLogger.child({ service: 'database' });
        try {
          checkBudget(logger, pools, await serverLimits(first));
        } catch (error) {
          logger.warn(`Could not read the PostgreSQL server's connection limits: ${error}`);
        }
      });
      return {
        forPlugin(pluginId: string, deps: Parameters<DatabaseManager['forPlugin']>[1]) {
          const database = manager.forPlugin(pluginId, deps);
          if (clientOf(databaseConfig, pluginId) === 'pg') postgresPlugins.set(pluginId, database);
          return database;
        },
      };
    },
    async factory({ pluginMetadata, lifecycle, logger }, root) {
      return root.forPlugin(pluginMetadata.getId(), { lifecycle, logger });
    },
  });
}
