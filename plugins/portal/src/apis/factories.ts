/*
 * How the plugin builds its APIs, shared by the new frontend system's ApiBlueprints and the
 * legacy plugin: through discovery (the backend's URL of each plugin) and the app's fetchApi,
 * which adds the signed-in user's Backstage token to every call.
 */
import { createApiFactory, discoveryApiRef, fetchApiRef } from '@backstage/frontend-plugin-api';
import { PortalClient } from '@devportal/plugin-portal-common';
import { mcpBrokerApiRef } from './McpBrokerApi';
import { McpBrokerClient } from './McpBrokerClient';
import { portalApiRef } from './PortalApi';

/** The default {@link portalApiRef} implementation: portal-common's typed client. */
export const portalApiFactory = createApiFactory({
  api: portalApiRef,
  deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
  factory: ({ discoveryApi, fetchApi }) =>
    new PortalClient({
      baseUrl: () => discoveryApi.getBaseUrl('portal'),
      fetch: fetchApi.fetch,
    }),
});

/** The default {@link mcpBrokerApiRef} implementation. */
export const mcpBrokerApiFactory = createApiFactory({
  api: mcpBrokerApiRef,
  deps: { discoveryApi: discoveryApiRef, fetchApi: fetchApiRef },
  factory: ({ discoveryApi, fetchApi }) => new McpBrokerClient({ discoveryApi, fetchApi }),
});
