/*
 * The portal REST API as this plugin consumes it: an API ref whose type is every public method of
 * portal-common's typed client, so the app can replace the implementation (a caching client, a
 * client with extra headers) with anything of the same shape.
 */
import { createApiRef } from '@backstage/frontend-plugin-api';
import type { PortalClient } from '@devportal/plugin-portal-common';

/**
 * The portal REST API (`/api/portal`): the public methods of `PortalClient` from
 * `@devportal/plugin-portal-common`.
 *
 * @public
 */
export type PortalApi = Pick<PortalClient, keyof PortalClient>;

/**
 * The API ref of {@link PortalApi}. The plugin provides a `PortalClient` that reaches the backend
 * through discovery and the app's `fetchApi` (which adds the user's Backstage token); an app may
 * replace it with an `ApiBlueprint` of its own for this ref.
 *
 * @public
 */
export const portalApiRef = createApiRef<PortalApi>().with({
  id: 'plugin.portal.api',
  pluginId: 'portal',
});
