/*
 * Where the broker's servers come from at runtime: `mcpBroker.servers` (re-read whenever the
 * root config changes, e.g. an edited app-config file or a mounted ConfigMap) and, when
 * `mcpBroker.kubernetes` is set, MCPServerRegistration resources, decided against the admin's
 * `mcpBroker.credentialProfiles` (re-read with the servers). Both feed one composer that
 * hands the broker the complete set; the broker works out what was added, changed or removed.
 * The same watch reads MCPVirtualServers, decided against that complete set (a virtual server
 * may name only its own namespace's servers' tools) whenever it changes, and hands the
 * Kubernetes curated endpoints to `onEndpoints`.
 */
import type {
  DiscoveryService,
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import type { McpBroker } from '../broker/McpBroker';
import { type BrokerServerConfig, readBrokerConfig } from '../config';
import type { CuratedEndpointConfig } from '../endpoints/endpointConfig';
import { createKubernetesDiscovery, type KubernetesDiscovery } from './createKubernetesDiscovery';
import { ServerSetComposer } from './ServerSetComposer';
import { readKubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import type { RefusedRegistration } from './RegistrationWatcher';
import type { RefusedVirtualServer } from './VirtualServerWatcher';

/** The running discovery; `stop` ends the config subscription and the Kubernetes watch. */
export interface ServerDiscovery {
  /** Registrations and virtual servers that serve nothing, and why (for `/status`). */
  refusedRegistrations(): Array<RefusedRegistration | RefusedVirtualServer>;
  stop(): Promise<void>;
}

/**
 * Starts discovery for `broker`. Reads `mcpBroker.kubernetes` now (a bad kubeconfig fails
 * start-up); its settings keep their start-up values, only the server lists change at runtime.
 */
export function startServerDiscovery(options: {
  config: RootConfigService;
  logger: LoggerService;
  broker: McpBroker;
  /** Backstage's discovery service: where a `backstage` profile's target plugin is served. */
  discovery: DiscoveryService;
  /** Receives the curated endpoints of MCPVirtualServers whenever they change. */
  onEndpoints(endpoints: CuratedEndpointConfig[]): void;
}): ServerDiscovery {
  const { config, logger, broker, discovery } = options;
  // Who gets every server set: the broker and (added below) the virtual servers' watcher.
  const serverSetListeners: Array<(servers: BrokerServerConfig[]) => void> = [
    servers => broker.setServers(servers),
  ];
  const composer = new ServerSetComposer(
    servers => serverSetListeners.forEach(listener => listener(servers)),
    logger,
  );
  const kubernetes = readKubernetesDiscoveryConfig(config);
  const kubernetesDiscovery: KubernetesDiscovery | undefined = kubernetes
    ? createKubernetesDiscovery({
        config: kubernetes,
        logger,
        profiles: broker.config.credentialProfiles,
        pluginBaseUrls: async pluginId => [
          await discovery.getBaseUrl(pluginId),
          await discovery.getExternalBaseUrl(pluginId),
        ],
        onServers: servers => composer.setKubernetesServers(servers),
        onEndpoints: options.onEndpoints,
      })
    : undefined;
  if (kubernetesDiscovery !== undefined) {
    serverSetListeners.push(servers => kubernetesDiscovery.virtualServers.setServers(servers));
  }
  composer.setConfigServers(broker.config.servers);
  // The profiles as written: a reload that leaves them alone does not re-decide registrations.
  const profilesAsWritten = () =>
    JSON.stringify(config.getOptional('mcpBroker.credentialProfiles') ?? null);
  let profiles = profilesAsWritten();
  // A broken reload is refused and the running set kept.
  const subscription = config.subscribe?.(() => {
    try {
      const reloaded = readBrokerConfig(config);
      composer.setConfigServers(reloaded.servers);
      const changed = profilesAsWritten();
      if (changed !== profiles) {
        profiles = changed;
        kubernetesDiscovery?.registrations.setProfiles(reloaded.credentialProfiles);
      }
    } catch (error) {
      logger.error(`Ignored the reloaded mcpBroker configuration: ${(error as Error).message}`);
    }
  });
  kubernetesDiscovery?.start();
  return {
    refusedRegistrations: () => [
      ...(kubernetesDiscovery?.registrations.refused() ?? []),
      ...(kubernetesDiscovery?.virtualServers.refused() ?? []),
    ],
    async stop() {
      subscription?.unsubscribe();
      await kubernetesDiscovery?.stop();
    },
  };
}
