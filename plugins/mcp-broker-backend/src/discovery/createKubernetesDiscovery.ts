/*
 * Builds the Kubernetes discovery from `mcpBroker.kubernetes` at plugin start: loads
 * client-node (ESM-only) and the kubeconfig now, so a wrong path or context fails start-up with
 * a message naming the key; nothing happens at import time. One client configuration serves
 * both watchers: MCPServerRegistrations (servers) and MCPVirtualServers (curated endpoints).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { loadKubernetesClient } from '@devportal/backend-kubernetes-client';
import type { BrokerServerConfig } from '../config';
import type { CuratedEndpointConfig } from '../endpoints/endpointConfig';
import type { CredentialProfile } from '../identity/credentialProfiles';
import {
  KUBERNETES_CONFIG_PATH,
  type KubernetesDiscoveryConfig,
} from './kubernetesDiscoveryConfig';
import { RegistrationWatcher } from './RegistrationWatcher';
import { VirtualServerWatcher } from './VirtualServerWatcher';

/** The two watchers of the Kubernetes discovery, started and stopped together. */
export interface KubernetesDiscovery {
  readonly registrations: RegistrationWatcher;
  /** Needs the broker's whole server set (`setServers`) to decide its resources. */
  readonly virtualServers: VirtualServerWatcher;
  start(): void;
  stop(): Promise<void>;
}

/** Creates (but does not start) the MCPServerRegistration and MCPVirtualServer watchers. */
export function createKubernetesDiscovery(options: {
  config: KubernetesDiscoveryConfig;
  logger: LoggerService;
  profiles: ReadonlyMap<string, CredentialProfile>;
  pluginBaseUrls(pluginId: string): Promise<readonly string[]>;
  onServers(servers: BrokerServerConfig[]): void;
  onEndpoints(endpoints: CuratedEndpointConfig[]): void;
}): KubernetesDiscovery {
  const { source } = options.config;
  const { lib, kubeConfig } = loadKubernetesClient(source, KUBERNETES_CONFIG_PATH);
  const registrations = new RegistrationWatcher({ ...options, lib, kubeConfig });
  const virtualServers = new VirtualServerWatcher({ ...options, lib, kubeConfig });
  return {
    registrations,
    virtualServers,
    start() {
      registrations.start();
      virtualServers.start();
    },
    async stop() {
      await Promise.all([registrations.stop(), virtualServers.stop()]);
    },
  };
}
