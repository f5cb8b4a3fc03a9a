import {
  coreServices,
  createBackendPlugin,
} from '@backstage/backend-plugin-api';
import { McpBroker } from './broker/mcpBroker';
import { createStreamingToolCallHandler } from './calls';
import { readBrokerConfig } from './config';
import { createRouter } from './router/createRouter';

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
        config: coreServices.rootConfig,
        logger: coreServices.logger,
        httpAuth: coreServices.httpAuth,
        httpRouter: coreServices.httpRouter,
        lifecycle: coreServices.lifecycle,
      },
      async init({ config, logger, httpAuth, httpRouter, lifecycle }) {
        const brokerConfig = readBrokerConfig(config);
        const broker = McpBroker.create({
          config: brokerConfig,
          logger,
          toolCallHandlerFactory: deps => createStreamingToolCallHandler(deps),
        });
        // Servers may be added or removed while running (config reload); every other setting
        // keeps its start-up value. A broken reload is refused and the running set kept.
        const subscription = config.subscribe?.(() => {
          try {
            broker.setServers(readBrokerConfig(config).servers);
          } catch (error) {
            logger.error(`Ignored the reloaded mcpBroker configuration: ${(error as Error).message}`);
          }
        });
        lifecycle.addShutdownHook(async () => {
          subscription?.unsubscribe();
          await broker.close();
        });
        httpRouter.use(await createRouter({ broker, httpAuth }));
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
      },
    });
  },
});
