/*
 * Wiring only: reads the config once, builds the store, the read-only resource source and
 * the services (with the events and notifications they announce changes through, and the
 * catalog that MCP products' targets are looked up in), schedules the task that announces
 * expired keys, registers the permissions and the `portal-apikey` resource type, and mounts
 * the router. The rules live in service/, the HTTP surface in router/.
 */
import { randomBytes } from 'node:crypto';
import { coreServices, createBackendPlugin } from '@backstage/backend-plugin-api';
import { catalogServiceRef } from '@backstage/plugin-catalog-node';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import { notificationService } from '@backstage/plugin-notifications-node';
import { portalPermissions } from '@devportal/plugin-portal-common';
import { PortalAuditor } from './audit/PortalAuditor';
import { MIN_PAGE_TOKEN_KEY_BYTES, readPortalConfig } from './config';
import { createKubernetesStorage } from './createKubernetesStorage';
import { CatalogMcpTargetDirectory } from './mcp/McpTargetDirectory';
import { loadApiKeyResource } from './permissions/apiKeyResources';
import { portalApiKeyResourceRef, portalApiKeyRules } from './permissions/rules';
import { ManifestResourceSource } from './resources/ManifestResourceSource';
import { createRouter } from './router/createRouter';
import { PageTokens } from './router/PageTokens';
import { AuthorizedPortalService } from './service/AuthorizedPortalService';
import { DefaultPortalService } from './service/DefaultPortalService';
import { KeyExpiryAnnouncer } from './service/KeyExpiryAnnouncer';
import { PortalActors } from './service/PortalActors';
import {
  permissionsWithDependencyErrors,
  userInfoWithDependencyErrors,
} from './service/dependencyErrors';
import { PortalEventPublisher } from './service/PortalEventPublisher';
import { PortalNotifier } from './service/PortalNotifier';
import { DatabasePortalStore } from './store/DatabasePortalStore';

/**
 * The portal backend plugin: the developer portal's REST API under `/api/portal`.
 *
 * @public
 */
export const portalPlugin = createBackendPlugin({
  pluginId: 'portal',
  register(env) {
    env.registerInit({
      deps: {
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        database: coreServices.database,
        httpRouter: coreServices.httpRouter,
        httpAuth: coreServices.httpAuth,
        userInfo: coreServices.userInfo,
        permissions: coreServices.permissions,
        permissionsRegistry: coreServices.permissionsRegistry,
        auditor: coreServices.auditor,
        auth: coreServices.auth,
        scheduler: coreServices.scheduler,
        catalog: catalogServiceRef,
        events: eventsServiceRef,
        notifications: notificationService,
      },
      async init(deps) {
        const config = readPortalConfig(deps.config);
        if (!config.permissionEnabled) {
          deps.logger.warn(
            'permission.enabled is false: every signed-in user may do everything in the portal (see the plugin README)',
          );
        }
        const { store, resources } =
          config.storage === 'kubernetes'
            ? await createKubernetesStorage(deps)
            : {
                store: await DatabasePortalStore.create({
                  database: deps.database,
                  logger: deps.logger,
                }),
                resources: await ManifestResourceSource.fromFiles(config.manifests),
              };
        // Page tokens: see router/PageTokens.ts for where the key comes from and why.
        const pageTokenKey =
          config.pageTokenSecret ??
          (store instanceof DatabasePortalStore
            ? await store.pageTokenKey()
            : randomBytes(MIN_PAGE_TOKEN_KEY_BYTES));
        // Failures of the auth and permission backends enter here, as 503 when they are down.
        const userInfo = userInfoWithDependencyErrors(deps.userInfo);
        const permissions = permissionsWithDependencyErrors(deps.permissions);
        // One per plugin, shared by both service layers: one user look-up a request.
        const actors = PortalActors.create({ userInfo });
        const events = PortalEventPublisher.create(deps);
        const notifier = PortalNotifier.create({ ...deps, links: config.notificationLinks });
        const service = DefaultPortalService.create({
          store,
          resources,
          actors,
          mcpTargets: CatalogMcpTargetDirectory.create(deps),
          events,
          notifier,
        });
        const expiry = KeyExpiryAnnouncer.create({ store, events, notifier, logger: deps.logger });
        await deps.scheduler.scheduleTask({
          id: 'portal-key-expiry',
          ...config.keyExpirySchedule,
          fn: async () => {
            await expiry.run();
          },
        });

        deps.permissionsRegistry.addPermissions(portalPermissions);
        deps.permissionsRegistry.addResourceType({
          resourceRef: portalApiKeyResourceRef,
          permissions: portalPermissions.filter(p => p.type === 'resource'),
          rules: portalApiKeyRules,
          getResources: refs => Promise.all(refs.map(ref => loadApiKeyResource(store, ref))),
        });

        deps.httpRouter.use(
          await createRouter({
            service: AuthorizedPortalService.create({
              service,
              permissions,
              actors,
            }),
            httpAuth: deps.httpAuth,
            auditor: PortalAuditor.create(deps.auditor),
            pageTokens: new PageTokens(pageTokenKey),
            requestBodyTimeoutMs: config.requestBodyTimeoutMs,
          }),
        );
      },
    });
  },
});
