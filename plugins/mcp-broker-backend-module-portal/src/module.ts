/*
 * Wiring of the broker module (docs/contracts/mcp-access.md §5.2): a portal client that
 * authenticates as this plugin (a service token targeting `portal`; service principals may read
 * the grants unless restricted), one PortalGrantSource given to the broker's grant extension
 * point, and a subscription to the portal's events so each approval, revocation and product
 * change reaches the broker's feed before the portal's answer leaves.
 */
import { coreServices, createBackendModule } from '@backstage/backend-plugin-api';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import { mcpAccessGrantsExtensionPoint } from '@devportal/plugin-mcp-broker-node';
import { PORTAL_EVENTS_TOPIC, PortalClient } from '@devportal/plugin-portal-common';
import { PortalGrantSource } from './PortalGrantSource';

/**
 * The MCP broker module that turns the portal's approved access requests for MCP products into
 * the broker's access grants (what the permission rule HAS_ACCESS_GRANT reads).
 *
 * @public
 */
export const mcpBrokerModulePortalAccessGrants = createBackendModule({
  pluginId: 'mcp-broker',
  moduleId: 'portal-access-grants',
  register(env) {
    env.registerInit({
      deps: {
        grants: mcpAccessGrantsExtensionPoint,
        logger: coreServices.logger,
        discovery: coreServices.discovery,
        auth: coreServices.auth,
        events: eventsServiceRef,
      },
      async init({ grants, logger, discovery, auth, events }) {
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
        const source = new PortalGrantSource({ client, logger });
        grants.addGrantSource(source);
        await events.subscribe({
          id: 'portal-access-grants',
          topics: [PORTAL_EVENTS_TOPIC],
          onEvent: params => source.onPortalEvent(params.eventPayload),
        });
      },
    });
  },
});
