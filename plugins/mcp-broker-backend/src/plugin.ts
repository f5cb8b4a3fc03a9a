import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { createRouter } from './router';

/**
 * The MCP broker backend plugin: one MCP endpoint at `/api/mcp-broker/mcp` that
 * aggregates the configured backend MCP servers.
 *
 * @public
 */
export const mcpBrokerPlugin = createBackendPlugin({
  pluginId: 'mcp-broker',
  register(env) {
    env.registerInit({
      deps: {
        httpRouter: coreServices.httpRouter,
      },
      async init({ httpRouter }) {
        httpRouter.use(await createRouter());
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
