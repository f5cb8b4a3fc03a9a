import { coreServices, createBackendPlugin } from '@backstage/backend-plugin-api';
import { ToolCallAuditor } from './audit/ToolCallAuditor';
import { prefixedName } from './broker/AggregatedCatalog';
import { McpBroker } from './broker/McpBroker';
import { createStreamingToolCallHandler, urlElicitationPolicy } from './calls';
import { readBrokerConfig } from './config';
import { MemoryTaskStore } from './tasks/MemoryTaskStore';
import { TaskAuditor } from './tasks/TaskAuditor';
import { startServerDiscovery } from './discovery/serverDiscovery';
import { BrokerAccessControl } from './permissions/BrokerAccessControl';
import { registerBrokerPermissions } from './permissions/registerBrokerPermissions';
import {
  PLUGIN_ENDPOINT_METADATA_PATH,
  PLUGIN_RESOURCE_METADATA_PATH,
  registerOAuthDiscovery,
} from './authorization/registerOAuthDiscovery';
import { createRouter } from './router/createRouter';
import { SELF_AUTHENTICATED_PATHS } from './router/requirePrincipal';
import { createSharedStateStores, readSessionStoreKind, readSignalNotifications } from './store';
import { readRequestStateSecret } from './inputRequests/requestStateKey';
import { BrokerKeys } from './identity/BrokerKeys';
import { readKeyRotationConfig } from './keyRotationConfig';
import { readRateLimitConfig } from './rateLimits/rateLimitConfig';
import { RequestRateLimits } from './rateLimits/RequestRateLimits';
import { rateLimitStep } from './router/rateLimitStep';
import { BrokerTelemetry } from './telemetry/BrokerTelemetry';
import { gaugeSnapshotOf } from './broker/brokerGauges';
import { withTraceIds } from './telemetry/traceLogger';
import { createBrokerIdentity } from './identity/createBrokerIdentity';
import { readCredentialPageLocation } from './identity/credentialPageLocation';
import { readCredentialCipher, requireKeyForUserCredentials } from './identity/credentialKeyConfig';
import { CredentialRetryStates } from './identity/CredentialRetryStates';
import { profileModes } from './identity/credentialProfiles';
import { CredentialStep } from './router/credentialStep';
import { createCredentialsRouter, IDENTITY_AUTH_POLICIES } from './router/credentialsRouter';
import { readCredentialWritePolicy } from './router/CredentialWriteGuard';
import { createIdentityStores } from './store/identityStores';
import { DatabaseToolPinStore } from './store/DatabaseToolPinStore';
import { ToolPins } from './pinning/ToolPins';
import { toolPinNotifier } from './pinning/toolPinNotifier';
import { readToolPinningConfig } from './toolPinningConfig';
import { createPinsRouter } from './router/pinsRouter';
import { notificationService } from '@backstage/plugin-notifications-node';
import { eventsServiceRef } from '@backstage/plugin-events-node';
import { describeServers } from './broker/serverDescriptions';
import { ServerChangePublisher } from './broker/ServerChangePublisher';
import { createServersRouter } from './router/serversRouter';
import { mcpAccessGrantsExtensionPoint } from '@devportal/plugin-mcp-broker-node';
import { AccessGrantFullSync, readAccessGrantSyncSchedule } from './grants/AccessGrantFullSync';
import { accessGrantsStatus } from './grants/accessGrantsStatus';
import type { AccessGrantsStatus } from '@devportal/plugin-mcp-broker-common';
import { AccessGrantSources } from './grants/AccessGrantSources';
import { GrantIndex } from './grants/GrantIndex';
import { DatabaseAccessGrantStore } from './store/DatabaseAccessGrantStore';
import { PostgresNotifications } from './store/PostgresNotifications';
import { readGrantFeedConfig } from './grants/grantFeedConfig';
import { readCuratedEndpoints } from './endpoints/endpointConfig';
import { CuratedEndpoints } from './endpoints/CuratedEndpoints';
import { EndpointListViews, parseViewer } from './endpoints/EndpointListViews';
import { watchEndpointConfig } from './endpoints/watchEndpointConfig';
import { EndpointSetComposer } from './endpoints/EndpointSetComposer';
import { readUsageConfig } from './usage/usageConfig';
import { DatabaseUsageStore } from './store/DatabaseUsageStore';
import { UsageRecorder } from './usage/UsageRecorder';
import { USAGE_RETENTION_SCHEDULE, UsageRetention } from './usage/UsageRetention';
import { DefaultUsageService } from './usage/DefaultUsageService';
import { AuthorizedUsageService } from './usage/AuthorizedUsageService';
import { UsagePageTokens } from './usage/usagePageTokens';
import { createUsageRouter } from './router/usageRouter';

/**
 * The MCP broker backend plugin: one MCP endpoint at `/api/mcp-broker/mcp` that
 * aggregates the configured backend MCP servers.
 *
 * @public
 */
export const mcpBrokerPlugin = createBackendPlugin({
  pluginId: 'mcp-broker',
  register(env) {
    // Modules add where access grants come from (the portal's module; contract mcp-access §5).
    const grantSources = new AccessGrantSources();
    env.registerExtensionPoint(mcpAccessGrantsExtensionPoint, grantSources);
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
        userInfo: coreServices.userInfo,
        auth: coreServices.auth,
        scheduler: coreServices.scheduler,
        notifications: notificationService,
        events: eventsServiceRef,
      },
      async init(deps) {
        const { config, logger, httpAuth, httpRouter, lifecycle, rootLifecycle, database } = deps;
        const brokerConfig = readBrokerConfig(config);
        // Curated endpoints (spec §13): named, narrower views served beside /mcp.
        const endpoints = new CuratedEndpoints(readCuratedEndpoints(config));
        const credentialCipher = readCredentialCipher(config);
        requireKeyForUserCredentials(
          [...brokerConfig.servers, ...profileModes(brokerConfig.credentialProfiles)],
          credentialCipher,
        );
        // Several replicas share sessions and elicitation ids through the database (spec §6).
        const sessionStoreKind = readSessionStoreKind(config);
        const signalNotifications = readSignalNotifications(config);
        // The replica's one LISTEN connection (PostgreSQL), shared by the signal bus and the
        // grant index; opened by the first of them to listen, ended by the last to stop.
        const notifications = PostgresNotifications.forReplica(
          await database.getClient(),
          signalNotifications,
        );
        const stores = await createSharedStateStores(sessionStoreKind, database, {
          signalNotifications,
          notifications,
        });
        const { sessionStore, elicitationStore, requestStateNonces } = stores;
        // A person's tasks (contract tasks-and-apps §2.4): shared, or this replica's.
        const tasks = stores.tasks ?? new MemoryTaskStore();
        // Marked present before anything is held, so no other replica takes this one's holds.
        await stores.presence?.start(logger);
        const identityStores = await createIdentityStores(database, {
          keyEncryption: credentialCipher !== undefined,
          shared: sessionStoreKind === 'database',
          logger,
        });
        // The broker's signing and requestState keys, shared and rotated (spec §11.1); a key
        // that does not open what is stored fails here.
        const keys = await BrokerKeys.create({
          store: identityStores.keys,
          cipher: credentialCipher,
          rotation: readKeyRotationConfig(config),
          elicitationTtlMs: brokerConfig.elicitationTtlMs,
          requestStateSecret: readRequestStateSecret(config),
          logger,
        });
        // Metrics and spans through the OpenTelemetry API: the deployment registers the SDK
        // (packages/backend/src/instrumentation.ts in development); without it they are no-ops.
        const telemetry = BrokerTelemetry.create();
        // Usage people can see (contract mcp-access §7): counted in memory on the call path,
        // added to the plugin's database (migrated above) every flush interval and at shutdown.
        const usageConfig = readUsageConfig(config);
        const usageStore = new DatabaseUsageStore(await database.getClient());
        const usage = UsageRecorder.create({
          store: usageStore,
          logger,
          flushIntervalMs: usageConfig.flushIntervalMs,
        });
        usage.start();
        // Access grants (contract mcp-access §5), in the plugin's database (migrated above):
        // written by their sources, read by HAS_ACCESS_GRANT through this replica's index.
        // Without a source nothing writes the feed: no index, no reads of it (no grant applies).
        // Woken by other replicas' writes through the LISTEN connection; polled as the fallback.
        const grantFeed = readGrantFeedConfig(config);
        const grantStore = new DatabaseAccessGrantStore(await database.getClient(), {
          notifications,
        });
        const grants =
          grantSources.list().length > 0
            ? await GrantIndex.create({ store: grantStore, logger, ...grantFeed })
            : undefined;
        // Configured limits and, for people holding grants, their plans' quotas (§6.4).
        const rateLimitConfig = readRateLimitConfig(config);
        const rateLimits = RequestRateLimits.create({
          config: rateLimitConfig,
          grants,
          store: stores.quota,
          userInfo: deps.userInfo,
          logger,
        });
        const access = BrokerAccessControl.create({
          grants: grants && { lookup: grants, version: () => grants.version() },
          permissions: deps.permissions,
          maxAgeMs: brokerConfig.permissionDecisionMaxAgeMs,
        });
        const brokerBaseUrl = await deps.discovery.getExternalBaseUrl('mcp-broker');
        // The app's "My connections" page when configured, else the broker's own page.
        const credentialPage = readCredentialPageLocation(config, brokerBaseUrl);
        // Pinned tool definitions (spec §13), in the plugin's database (migrated above).
        const pinning = readToolPinningConfig(config);
        const toolPins = new ToolPins({
          store: new DatabaseToolPinStore(await database.getClient()),
          logger,
          auditor: deps.auditor,
          notify: toolPinNotifier(deps.notifications, pinning.notify),
          defaultMode: pinning.mode,
          refreshMs: pinning.refreshMs,
        });
        // A backend's URL elicitations: https only (loopback http in development), named with
        // their server, never the broker's own pages nor the app's credential page (spec §11.1).
        const urlElicitations = urlElicitationPolicy(brokerBaseUrl, credentialPage.appPage);
        const broker = McpBroker.create({
          config: brokerConfig,
          // Log lines written while a request is served carry its trace id.
          logger: withTraceIds(logger),
          sessionStore,
          // list_changed only to clients whose permitted view (through their endpoint) can have changed.
          listViews: new EndpointListViews(access, endpoints),
          toolPins,
          // Task status changes travel to every replica on the signal bus (contract §2.10).
          tasks: {
            store: tasks,
            inputs: stores.taskInputs,
            auditor: new TaskAuditor(deps.auditor, logger),
            metrics: telemetry.metrics,
            urlElicitations,
            signals: stores.signals,
            replicaId: stores.presence?.id,
            onNotificationSent: era => telemetry.metrics.taskNotificationSent(era),
            elicitations: elicitationStore,
          },
          toolCallHandlerFactory: handlerDeps =>
            createStreamingToolCallHandler(handlerDeps, {
              store: elicitationStore,
              requestState: { keys: keys.requestState, nonces: requestStateNonces },
              shared: stores.heldCalls &&
                stores.signals && { heldCalls: stores.heldCalls, signals: stores.signals },
              telemetry,
              urlElicitations,
            }),
        });
        // Each person's own identity at the backends (spec §11); a wrong credential key fails here.
        const identity = await createBrokerIdentity({
          auth: deps.auth,
          logger,
          stores: identityStores,
          signingKeys: keys.signing,
          cipher: credentialCipher,
          externalBaseUrl: brokerBaseUrl,
          pageUrl: credentialPage.pageUrl,
          elicitationTtlMs: brokerConfig.elicitationTtlMs,
          requestTimeoutMs: brokerConfig.requestTimeoutMs,
          servers: { get: name => broker.server(name), list: () => broker.serverList() },
          notifyComplete: (sessionId, elicitationId) =>
            broker.sessions.localEventStream(sessionId)?.send({
              jsonrpc: '2.0',
              method: 'notifications/elicitation/complete',
              params: { elicitationId },
            }),
        });
        // Servers may be added, changed or removed while running (config reload, Kubernetes
        // registrations); every other setting keeps its start-up value.
        // Curated endpoints from config and MCPVirtualServers, served as one set (spec §13).
        const endpointSet = new EndpointSetComposer({
          configEndpoints: endpoints.list().map(endpoint => endpoint.config),
          endpoints,
          broker,
          logger,
        });
        const discovery = startServerDiscovery({
          config,
          logger,
          broker,
          discovery: deps.discovery,
          onEndpoints: configs => endpointSet.setKubernetesEndpoints(configs),
        });
        // Curated endpoints follow config reloads too (added, changed, removed: spec §13).
        const endpointWatch = watchEndpointConfig({ config, logger, endpoints: endpointSet });
        // Server changes on the events topic `mcp-broker`, for the catalog module (contract §2.7).
        const serverChanges = ServerChangePublisher.create({
          events: deps.events,
          logger,
          describe: () => describeServers(broker),
        });
        broker.onCatalogRebuilt(() => serverChanges.check());
        serverChanges.check();
        // Drain before the plugins' shutdown hooks run: from then on Backstage answers every
        // request to the plugin 503 itself, and draining calls may still need client answers.
        rootLifecycle.addBeforeShutdownHook(() => broker.drain());
        telemetry.observe(() => gaugeSnapshotOf(broker.status(), broker.tasksWatched));
        lifecycle.addShutdownHook(async () => {
          serverChanges.close();
          endpointWatch.stop();
          await discovery.stop();
          await broker.close();
          // After the calls ended: their counts are final.
          await usage.close();
          await grants?.close();
          // After the calls ended: what this replica held is given up or ended by now.
          await stores.presence?.stop();
          rateLimits?.close();
          telemetry.close();
          await identity.close();
          keys.close();
        });
        const serverResourceOf = (name: string) => {
          const server = broker.server(name);
          return server && { server: server.name, ...(server.owner && { owner: server.owner }) };
        };
        registerBrokerPermissions(
          deps.permissionsRegistry,
          () => broker.catalog(),
          access.rules,
          serverResourceOf,
        );
        const usageRetention = new UsageRetention(usageStore, usageConfig.retentionDays);
        await deps.scheduler.scheduleTask({
          id: 'mcp-broker.usage-retention',
          ...USAGE_RETENTION_SCHEDULE,
          fn: async () => {
            await usageRetention.deleteExpired(Date.now());
          },
        });
        // A grant that came or went changes people's lists: list_changed to their streams.
        let grantsStatus: (() => AccessGrantsStatus) | undefined;
        if (grants !== undefined) {
          grants.onChange(change => {
            const audience = access.grantAudience(change);
            broker.announceViewChanges(viewer =>
              audience(viewer && parseViewer(viewer).credential),
            );
          });
          await grantSources.start(grantStore, logger, () => grants.refresh());
          const fullSync = new AccessGrantFullSync({
            sources: grantSources,
            store: grantStore,
            logger,
            onWritten: () => grants.refresh(),
          });
          await deps.scheduler.scheduleTask({
            id: 'mcp-broker.access-grants-sync',
            ...readAccessGrantSyncSchedule(config),
            fn: signal => fullSync.run(signal),
          });
          grantsStatus = () => accessGrantsStatus(grantSources, grants, fullSync);
        }
        const toolCallAuditor = ToolCallAuditor.create({ auditor: deps.auditor, logger, usage });
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
        httpRouter.addAuthPolicy({ path: PLUGIN_ENDPOINT_METADATA_PATH, allow: 'unauthenticated' });
        httpRouter.use(
          await createRouter({
            broker,
            httpAuth,
            access,
            toolCallAuditor,
            resourceMetadataUrl: oauth.resourceMetadataUrl,
            resourceMetadataUrlOf: name => oauth.resourceMetadataUrlOf(name),
            telemetry,
            // The admission chain's limits stage: the per-person rate limit (spec §12).
            limits: rateLimits ? [rateLimitStep({ rateLimits, toolCallAuditor, httpAuth })] : [],
            rateLimitedMethods: rateLimitConfig?.methods,
            credentialStep: new CredentialStep({
              provider: identity.provider,
              httpAuth,
              retryStates: new CredentialRetryStates(
                keys.requestState,
                brokerConfig.elicitationTtlMs,
              ),
            }),
            identityStatusOf: name => {
              const server = broker.server(name);
              return server && identity.provider.statusOf(server);
            },
            refusedRegistrations: () => discovery.refusedRegistrations(),
            accessGrants: grantsStatus,
            endpoints,
          }),
        );
        // Usage per person, server and tool (contract §7.3), decided by the decorator.
        httpRouter.use(
          createUsageRouter({
            httpAuth,
            usage: new AuthorizedUsageService({
              inner: new DefaultUsageService({
                store: usageStore,
                servers: () => broker.serverList(),
                grants: grants &&
                  rateLimits && {
                    grantsOf: subject => grants.grantsOf(subject),
                    planUsage: (grant, principal) => rateLimits.planUsage(grant, principal),
                  },
                pageTokens: new UsagePageTokens(keys.requestState),
              }),
              permissions: deps.permissions,
              rules: access.rules.server,
              serverOf: serverResourceOf,
            }),
          }),
        );
        // The server descriptions the catalog module reads (contract §2.6).
        httpRouter.use(createServersRouter({ broker, httpAuth, permissions: deps.permissions }));
        httpRouter.use(
          createPinsRouter({
            httpAuth,
            permissions: deps.permissions,
            pins: toolPins,
            clientNameOf: (server, tool) => {
              const entry = broker.server(server);
              return entry && prefixedName(entry, tool);
            },
          }),
        );
        httpRouter.use(
          createCredentialsRouter({
            httpAuth,
            selfService: identity.selfService,
            issuer: identity.issuer,
            basePath: new URL(brokerBaseUrl).pathname,
            pageUrl: identity.pageUrl,
            appUrl: config.getOptionalString('app.baseUrl'),
            writePolicy: readCredentialWritePolicy(config),
          }),
        );
        for (const policy of IDENTITY_AUTH_POLICIES) httpRouter.addAuthPolicy(policy);
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
