/*
 * A module of the permission plugin (the RBAC plugin, as published) that holds the RBAC
 * plugin's start back until every plugin named in `permission.rbac.pluginsWithPermission` has
 * registered its routes (docs/deployment.md, "Starting").
 *
 * Why: RBAC 6.1.0 applies the conditional policy file in its init and reads each named plugin's
 * permission metadata over HTTP once. Backstage's root router already listens then and answers
 * 404 for a plugin whose routes are not registered yet, and RBAC skips that plugin's conditional
 * policies until the next restart. A plugin cannot register earlier by itself: Backstage mounts
 * `/api/<pluginId>` when it builds the plugin's HTTP router, which needs the plugin's auth
 * service, whose key store needs the plugin's database (on PostgreSQL a `CREATE DATABASE` in
 * turn with every other plugin's, then migrations) — all before the plugin's own code runs.
 *
 * How: Backstage initialises a plugin's modules before the plugin itself, so this module's init
 * runs before RBAC's. It asks each plugin for `/.backstage/auth/v1/jwks.json`, which Backstage's
 * HTTP router answers as soon as the routes are mounted, without waiting for the plugin's init
 * (a request for the metadata would wait for the init: a plugin whose init asks the permission
 * plugin something would then wait for RBAC, and RBAC for it). Once mounted, RBAC's own read
 * waits for a plugin that is still starting (`backend.lifecycle.startupRequestPauseTimeout`).
 *
 * Failure modes: a named plugin that never mounts (not installed, failed to start) is waited for
 * at most {@link ROUTE_WAIT_MS}, then logged as an error, and RBAC starts anyway (it then logs
 * `No permission metadata found for <pluginId>` itself). Nothing changes once the backend is up.
 */
import { coreServices, createBackendModule } from '@backstage/backend-plugin-api';

/** How long the RBAC plugin's start waits for a named plugin's routes (ms). */
export const ROUTE_WAIT_MS = 60_000;
/** How often a plugin whose routes answer 404 is asked again (ms). */
const ROUTE_POLL_MS = 250;

/** Resolves true once `url` answers anything but 404, false once `deadline` has passed. */
async function untilMounted(url: string, deadline: number): Promise<boolean> {
  for (;;) {
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(ROUTE_POLL_MS * 20) });
      await response.body?.cancel();
      if (response.status !== 404) return true;
    } catch {
      // not listening yet, or no answer in time: ask again
    }
    if (Date.now() >= deadline) return false;
    await new Promise(resolve => setTimeout(resolve, ROUTE_POLL_MS));
  }
}

/**
 * The permission plugin's module that makes RBAC read the named plugins' permission metadata
 * only after their routes are mounted; see the file comment.
 */
export const permissionModuleAwaitPluginRoutes = createBackendModule({
  pluginId: 'permission',
  moduleId: 'await-plugin-routes',
  register(reg) {
    reg.registerInit({
      deps: {
        config: coreServices.rootConfig,
        discovery: coreServices.discovery,
        logger: coreServices.logger,
      },
      async init({ config, discovery, logger }) {
        const pluginIds = (
          config.getOptionalStringArray('permission.rbac.pluginsWithPermission') ?? []
        ).filter(pluginId => pluginId !== 'permission');
        const deadline = Date.now() + ROUTE_WAIT_MS;
        await Promise.all(
          pluginIds.map(async pluginId => {
            const url = `${await discovery.getBaseUrl(pluginId)}/.backstage/auth/v1/jwks.json`;
            if (!(await untilMounted(url, deadline))) {
              logger.error(
                `The routes of plugin ${pluginId} were not mounted within ${ROUTE_WAIT_MS} ms; ` +
                  'RBAC starts without waiting longer and may skip its conditional policies ' +
                  '(docs/deployment.md, "Starting")',
              );
            }
          }),
        );
      },
    });
  },
});
