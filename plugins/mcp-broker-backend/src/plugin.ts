import { coreServices, createBackendPlugin } from '@backstage/backend-plugin-api';
import { ToolCallAuditor } from './audit/ToolCallAuditor';
import { McpBroker } from './broker/McpBroker';
import { createStreamingToolCallHandler } from './backend';
import { readBrokerConfig } from './config';
import { startServerDiscovery } from './discovery/serverDiscovery';
import { BrokerAccessControl } from './permissions/BrokerAccessControl';
import { registerBrokerPermissions } from './permissions/registerBrokerPermissions';
import {
  PLUGIN_RESOURCE_METADATA_PATH,
  registerOAuthDiscovery,
} from './authorization/registerOAuthDiscovery';
import { createRouter } from './router/createRouter';
import { SELF_AUTHENTICATED_PATHS } from './router/requirePrincipal';
import { createSharedStateStores, readSessionStoreKind } from './store';
import { readRequestStateSecret, resolveRequestStateKey } from './inputRequests/requestStateKey';

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
        rootHttpRouter: coreServices.rootHttpRouter,
        discovery: coreServices.discovery,
        lifecycle: coreServices.lifecycle,
        rootLifecycle: coreServices.rootLifecycle,
        database: coreServices.database,
        permissions: coreServices.permissions,
        permissionsRegistry: coreServices.permissionsRegistry,
        auditor: coreServices.auditor,
      },
      async init(deps) {
        const { config, logger, httpAuth, httpRouter, lifecycle, rootLifecycle, database } = deps;
        const brokerConfig = readBrokerConfig(config);
        // Several replicas share sessions and elicitation ids through the database (spec §6).
        const stores = await createSharedStateStores(readSessionStoreKind(config), database);
        const { sessionStore, elicitationStore, requestStateNonces } = stores;
        // The requestState key is shared by every replica (config, else the database).
        const requestStateKey = await resolveRequestStateKey(
          readRequestStateSecret(config),
          stores.requestStateKeys,
        );
        const access = BrokerAccessControl.create({
          permissions: deps.permissions,
          maxAgeMs: brokerConfig.permissionDecisionMaxAgeMs,
        });
        const broker = McpBroker.create({
          config: brokerConfig,
          logger,
          sessionStore,
          // list_changed only to clients whose permitted view can have changed.
          listViews: access,
          toolCallHandlerFactory: handlerDeps =>
            createStreamingToolCallHandler(handlerDeps, {
              store: elicitationStore,
              cancellations: stores.cancellations,
              requestState: {
                key: requestStateKey,
                nonces: requestStateNonces,
                heldCalls: stores.heldCalls,
              },
            }),
        });
        // Servers may be added, changed or removed while running (config reload, Kubernetes
        // registrations); every other setting keeps its start-up value.
        const discovery = startServerDiscovery({ config, logger, broker });
        // Drain before the plugins' shutdown hooks run: from then on Backstage answers every
        // request to the plugin 503 itself, and draining calls may still need client answers.
        rootLifecycle.addBeforeShutdownHook(() => broker.drain());
        lifecycle.addShutdownHook(async () => {
          await discovery.stop();
          await broker.close();
        });
        registerBrokerPermissions(deps.permissionsRegistry, () => broker.catalog());
        const toolCallAuditor = ToolCallAuditor.create({ auditor: deps.auditor, logger });
        // MCP clients sign in through Backstage's auth backend (spec §10): the discovery documents
        // they look for, and the metadata URL every 401 of /mcp names.
        const oauth = await registerOAuthDiscovery({
          config,
          logger,
          discovery: deps.discovery,
          rootHttpRouter: deps.rootHttpRouter,
        });
        httpRouter.use(oauth.pluginRouter);
        httpRouter.addAuthPolicy({ path: PLUGIN_RESOURCE_METADATA_PATH, allow: 'unauthenticated' });
        httpRouter.use(
          await createRouter({
            broker,
            httpAuth,
            access,
            toolCallAuditor,
            resourceMetadataUrl: oauth.resourceMetadataUrl,
          }),
        );
        httpRouter.addAuthPolicy({ path: '/health', allow: 'unauthenticated' });
        // 'unauthenticated' only towards Backstage's barrier: the router authenticates these
        // paths itself (requirePrincipal), remembering verified tokens, where the barrier would
        // verify the same token's signature again on every request of a session.
        for (const path of SELF_AUTHENTICATED_PATHS)
          httpRouter.addAuthPolicy({ path, allow: 'unauthenticated' });
      },
    });
  },
});
