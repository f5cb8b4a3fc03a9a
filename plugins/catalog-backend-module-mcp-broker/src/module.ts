/*
 * Wiring of the catalog module: builds the McpBrokerEntityProvider with a broker client that
 * authenticates as this plugin (a service token targeting `mcp-broker`; service principals pass
 * `mcp-broker.server.read`), registers it with the catalog, schedules the full synchronisation
 * and subscribes to the broker's events topic for deltas.
 */
import {
  coreServices,
  createBackendModule,
  readSchedulerServiceTaskScheduleDefinitionFromConfig,
  type SchedulerServiceTaskScheduleDefinition,
} from '@backstage/backend-plugin-api';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import { InputError } from '@backstage/errors';
import { catalogProcessingExtensionPoint } from '@backstage/plugin-catalog-node';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import { MCP_BROKER_EVENTS_TOPIC, McpBrokerClient } from '@devportal/plugin-mcp-broker-common';
import {
  McpBrokerEntityProvider,
  MCP_BROKER_ENTITY_PROVIDER_NAME,
} from './McpBrokerEntityProvider';

/** The full synchronisation's default schedule. */
const DEFAULT_SCHEDULE: SchedulerServiceTaskScheduleDefinition = {
  frequency: { minutes: 30 },
  timeout: { minutes: 3 },
  initialDelay: { seconds: 5 },
};

/** The default address of a server's MCP tools page in the frontend. */
const DEFAULT_TOOLS_PAGE_URL_TEMPLATE = '/mcp?server={name}';

/** The default owner of servers the broker names no owner for. */
const DEFAULT_OWNER = 'group:default/mcp-admins';

/** `defaultOwner` as a full entity ref (kind `group`, namespace `default` filled in). */
function readDefaultOwner(value: string | undefined): string {
  if (value === undefined) return DEFAULT_OWNER;
  try {
    return stringifyEntityRef(parseEntityRef(value, { defaultKind: 'group' }));
  } catch {
    throw new InputError(
      `Invalid catalog.providers.mcpBroker.defaultOwner "${value.slice(0, 100)}": use an entity ref such as group:default/mcp-admins`,
    );
  }
}

/**
 * The catalog module that publishes the MCP broker's servers as API entities of type
 * `mcp-server`.
 *
 * @public
 */
export const catalogModuleMcpBrokerEntityProvider = createBackendModule({
  pluginId: 'catalog',
  moduleId: 'mcp-broker-entity-provider',
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
        const providerConfig = config.getOptionalConfig('catalog.providers.mcpBroker');
        const schedule = providerConfig?.has('schedule')
          ? readSchedulerServiceTaskScheduleDefinitionFromConfig(
              providerConfig.getConfig('schedule'),
            )
          : DEFAULT_SCHEDULE;
        const appBaseUrl = (config.getOptionalString('app.baseUrl') ?? '').replace(/\/+$/, '');
        const template =
          providerConfig?.getOptionalString('toolsPageUrlTemplate') ??
          DEFAULT_TOOLS_PAGE_URL_TEMPLATE;
        const defaultOwner = readDefaultOwner(providerConfig?.getOptionalString('defaultOwner'));
        const brokerBaseUrl = (await discovery.getExternalBaseUrl('mcp-broker')).replace(
          /\/+$/,
          '',
        );

        const client = new McpBrokerClient({
          baseUrl: () => discovery.getBaseUrl('mcp-broker'),
          getToken: async () =>
            (
              await auth.getPluginRequestToken({
                onBehalfOf: await auth.getOwnServiceCredentials(),
                targetPluginId: 'mcp-broker',
              })
            ).token,
        });
        const provider = McpBrokerEntityProvider.create({
          client,
          logger,
          taskRunner: scheduler.createScheduledTaskRunner(schedule),
          entityOptions: {
            toolsPageUrlTemplate: template.startsWith('/') ? `${appBaseUrl}${template}` : template,
            mcpEndpointUrl: `${brokerBaseUrl}/mcp`,
            defaultOwner,
            location: `mcp-broker:${brokerBaseUrl}`,
          },
        });
        catalog.addEntityProvider(provider);
        // Subscribed at once, so no event of this process is missed. Split deployments need
        // `events.useEventBus: always` (see the README).
        await events.subscribe({
          id: 'mcp-broker-entity-provider',
          topics: [MCP_BROKER_EVENTS_TOPIC],
          onEvent: params => provider.onBrokerEvent(params.eventPayload),
        });
        lifecycle.addShutdownHook(() => provider.drain());
        logger.debug(`${MCP_BROKER_ENTITY_PROVIDER_NAME}: reading ${brokerBaseUrl}/servers`);
      },
    });
  },
});
