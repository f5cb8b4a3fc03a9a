/*
 * Where the broker's servers come from at runtime: `mcpBroker.servers` (re-read whenever the
 * root config changes, e.g. an edited app-config file or a mounted ConfigMap) and, when
 * `mcpBroker.kubernetes` is set, MCPServerRegistration resources, decided against the admin's
 * `mcpBroker.credentialProfiles` (re-read with the servers). Both feed one composer that
 * hands the broker the complete set; the broker works out what was added, changed or removed.
 */
import type {
  DiscoveryService,
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import type { McpBroker } from '../broker/McpBroker';
import { readBrokerConfig } from '../config';
import { createKubernetesDiscovery } from './createKubernetesDiscovery';
import { ServerSetComposer } from './ServerSetComposer';
import { readKubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import type { RefusedRegistration } from './RegistrationWatcher';

/** The running discovery; `stop` ends the config subscription and the Kubernetes watch. */
export interface ServerDiscovery {
  /** Registrations that serve nothing, and why (for `/status`). */
  refusedRegistrations(): RefusedRegistration[];
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
}): ServerDiscovery {
  const { config, logger, broker, discovery } = options;
  const composer = new ServerSetComposer(servers => broker.setServers(servers), logger);
  composer.setConfigServers(broker.config.servers);
  const kubernetes = readKubernetesDiscoveryConfig(config);
  const watcher = kubernetes
    ? createKubernetesDiscovery({
        config: kubernetes,
        logger,
        profiles: broker.config.credentialProfiles,
        pluginBaseUrls: async pluginId => [
          await discovery.getBaseUrl(pluginId),
          await discovery.getExternalBaseUrl(pluginId),
        ],
        onServers: servers => composer.setKubernetesServers(servers),
      })
    : undefined;
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
        watcher?.setProfiles(reloaded.credentialProfiles);
      }
    } catch (error) {
      logger.error(`Ignored the reloaded mcpBroker configuration: ${(error as Error).message}`);
    }
  });
  watcher?.start();
  return {
    refusedRegistrations: () => watcher?.refused() ?? [],
    async stop() {
      subscription?.unsubscribe();
      await watcher?.stop();
    },
  };
}
