/*
 * Where the broker's servers come from at runtime: `mcpBroker.servers` (re-read whenever the
 * root config changes, e.g. an edited app-config file or a mounted ConfigMap) and, when
 * `mcpBroker.kubernetes` is set, MCPServerRegistration resources. Both feed one composer that
 * hands the broker the complete set; the broker works out what was added, changed or removed.
 */
import type { LoggerService, RootConfigService } from '@backstage/backend-plugin-api';
import type { McpBroker } from '../broker/McpBroker';
import { readBrokerConfig } from '../config';
import { createKubernetesDiscovery } from './createKubernetesDiscovery';
import { ServerSetComposer } from './ServerSetComposer';
import { readKubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';

/** The running discovery; `stop` ends the config subscription and the Kubernetes watch. */
export interface ServerDiscovery {
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
}): ServerDiscovery {
  const { config, logger, broker } = options;
  const composer = new ServerSetComposer(servers => broker.setServers(servers), logger);
  composer.setConfigServers(broker.config.servers);
  // A broken reload is refused and the running set kept.
  const subscription = config.subscribe?.(() => {
    try {
      composer.setConfigServers(readBrokerConfig(config).servers);
    } catch (error) {
      logger.error(`Ignored the reloaded mcpBroker configuration: ${(error as Error).message}`);
    }
  });
  const kubernetes = readKubernetesDiscoveryConfig(config);
  const watcher = kubernetes
    ? createKubernetesDiscovery({
        config: kubernetes,
        logger,
        onServers: servers => composer.setKubernetesServers(servers),
      })
    : undefined;
  watcher?.start();
  return {
    async stop() {
      subscription?.unsubscribe();
      await watcher?.stop();
    },
  };
}
