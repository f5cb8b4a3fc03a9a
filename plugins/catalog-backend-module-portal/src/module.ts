/*
 * Wiring of the catalog module: builds the PortalEntityProvider with a portal client that
 * authenticates as this plugin (a service token targeting `portal`; the permission
 * framework lets service principals read, so the module sees every product), registers it
 * with the catalog, schedules the full synchronisation and subscribes to the portal's
 * events for deltas.
 */
import {
  coreServices,
  createBackendModule,
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  type SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import { catalogProcessingExtensionPoint } from '@backstage/plugin-catalog-node';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import { PORTAL_EVENTS_TOPIC, PortalClient } from '@devportal/plugin-portal-common';
import { PortalEntityProvider } from './PortalEntityProvider';

/** The full synchronisation's default schedule. */
const DEFAULT_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { minutes: 30 },
  timeout: { minutes: 3 },
  initialDelay: { seconds: 5 },
};

/** The default address of a product in the portal's frontend. */
const DEFAULT_PRODUCT_URL_TEMPLATE = '/portal/products/{namespace}/{name}';

/**
 * The catalog module that publishes the portal's Published API Products as API entities.
 *
 * @public
 */
export const catalogModulePortalEntityProvider = createBackendModule({
  pluginId: 'catalog',
  moduleId: 'portal-entity-provider',
  register(env) {
    env.registerInit({
      deps: {
        catalog: catalogProcessingExtensionPoint,
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        scheduler: coreServices.scheduler,
        discovery: coreServices.discovery,
        auth: coreServices.auth,
        lifecycle: coreServices.lifecycle,
        events: eventsServiceRef,
      },
      async init({ catalog, config, logger, scheduler, discovery, auth, lifecycle, events }) {
        const providerConfig = config.getOptionalConfig('catalog.providers.portal');
        const schedule = providerConfig?.has('schedule')
          ? readSchedulerServiceTaskScheduleDefinitionFromConfig(
              providerConfig.getConfig('schedule'),
            )
          : DEFAULT_SCHEDULE;
        const appBaseUrl = config.getOptionalString('app.baseUrl') ?? '';
        const template =
          providerConfig?.getOptionalString('productUrlTemplate') ?? DEFAULT_PRODUCT_URL_TEMPLATE;

        const client = new PortalClient({
          baseUrl: () => discovery.getBaseUrl('portal'),
          getToken: async () =>
            (
              await auth.getPluginRequestToken({
                onBehalfOf: await auth.getOwnServiceCredentials(),
                targetPluginId: 'portal',
              })
            ).token,
        });
        const provider = PortalEntityProvider.create({
          client,
          logger,
          taskRunner: scheduler.createScheduledTaskRunner(schedule),
          productUrlTemplate: template.startsWith('/')
            ? `${appBaseUrl.replace(/\/+$/, '')}${template}`
            : template,
        });
        catalog.addEntityProvider(provider);
        // Subscribed at once, so no event of this process is missed. A subscription made
        // while the events backend is still starting stays local to this process unless
        // `events.useEventBus: always` (see the README: only split deployments need the bus).
        await events.subscribe({
          id: 'portal-entity-provider',
          topics: [PORTAL_EVENTS_TOPIC],
          onEvent: params => provider.onPortalEvent(params.eventPayload),
        });
        lifecycle.addShutdownHook(() => provider.drain());
      },
    });
  },
});
