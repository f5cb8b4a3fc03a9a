import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { portalPermissions } from '@devportal/plugin-portal-common';
import { createRouter } from './router';

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
        httpRouter: coreServices.httpRouter,
        permissionsRegistry: coreServices.permissionsRegistry,
      },
      async init({ httpRouter, permissionsRegistry }) {
        permissionsRegistry.addPermissions(portalPermissions);
        httpRouter.use(await createRouter());
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
