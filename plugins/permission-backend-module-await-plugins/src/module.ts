/*
 * A module of the permission plugin (the RBAC plugin, as published) that holds the RBAC
 * plugin's start back until every plugin named in `permission.rbac.pluginsWithPermission` is up:
 * its routes mounted and its init finished (this package's README; docs/deployment.md, "Starting"
 * in the repository).
 *
 * Why: RBAC 6.1.0 applies the conditional policy file in its init and reads each named plugin's
 * permission metadata over HTTP once, skipping a plugin's conditional policies until the next
 * restart when that read fails. It fails in two ways at start:
 * - 404: Backstage's root router already listens, but mounts `/api/<pluginId>` only when it has
 *   built the plugin's HTTP router, which needs the plugin's auth service, whose key store needs
 *   the plugin's database (on PostgreSQL a `CREATE DATABASE` in turn with every other plugin's,
 *   then migrations) — all before the plugin's own code runs, so no plugin can mount earlier;
 * - 503: once mounted, Backstage holds every request to the plugin until its init has finished,
 *   for at most `backend.lifecycle.startupRequestPauseTimeout` (5 s by default), then answers 503.
 *   On a loaded machine a plugin's init (migrations, stores) took longer than even 60 s.
 *
 * How: Backstage initialises a plugin's modules before the plugin itself, so this module's init
 * runs before RBAC's. It asks each named plugin for its metadata without a token until the
 * plugin itself refuses it (401: the routes are mounted and the init has finished, since
 * Backstage holds the request until then); 404 and 503 mean "ask again". RBAC's own read, with a
 * token, then finds every plugin up. A plugin whose init waited for the permission plugin would
 * wait for this module in turn; none of the named plugins does (their inits only register
 * permissions), and the wait is bounded.
 *
 * Failure modes: a named plugin that is not up within {@link PLUGIN_WAIT_MS} (not installed,
 * failed to start) is logged as an error, and RBAC starts anyway (it then logs `No permission
 * metadata found for <pluginId>` or `Failed to retrieve permission metadata for <pluginId>`
 * itself). Nothing changes once the backend is up.
 */
import { coreServices, createBackendModule } from '@backstage/backend-plugin-api';
import { untilUp } from './untilUp';

/**
 * How long the RBAC plugin's start waits for a named plugin to be up (ms).
 *
 * @public
 */
export const PLUGIN_WAIT_MS = 300_000;
/**
 * The permission plugin's module that makes RBAC read the named plugins' permission metadata
 * only once they are up; see the file comment.
 *
 * @public
 */
export const permissionModuleAwaitPlugins = createBackendModule({
  pluginId: 'permission',
  moduleId: 'await-plugins',
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
        const deadline = Date.now() + PLUGIN_WAIT_MS;
        await Promise.all(
          pluginIds.map(async pluginId => {
            const baseUrl = await discovery.getBaseUrl(pluginId);
            const metadataUrl = `${baseUrl}/.well-known/backstage/permissions/metadata`;
            if (!(await untilUp(metadataUrl, deadline))) {
              logger.error(
                `Plugin ${pluginId} was not up within ${PLUGIN_WAIT_MS} ms; RBAC starts without ` +
                  'waiting longer and may skip its conditional policies',
              );
            }
          }),
        );
      },
    });
  },
});
