/*
 * Builds the Kubernetes discovery from `mcpBroker.kubernetes` at plugin start: loads
 * client-node (ESM-only) and the kubeconfig now, so a wrong path or context fails start-up with
 * a message naming the key; nothing happens at import time.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { loadKubernetesClient } from '@devportal/backend-kubernetes-client';
import type { BrokerServerConfig } from '../config';
import type { CredentialProfile } from '../identity/credentialProfiles';
import {
  KUBERNETES_CONFIG_PATH,
  type KubernetesDiscoveryConfig,
} from './kubernetesDiscoveryConfig';
import { RegistrationWatcher } from './RegistrationWatcher';

/** Creates (but does not start) the MCPServerRegistration watcher. */
export function createKubernetesDiscovery(options: {
  config: KubernetesDiscoveryConfig;
  logger: LoggerService;
  profiles: ReadonlyMap<string, CredentialProfile>;
  pluginBaseUrls(pluginId: string): Promise<readonly string[]>;
  onServers(servers: BrokerServerConfig[]): void;
}): RegistrationWatcher {
  const { source } = options.config;
  const { lib, kubeConfig } = loadKubernetesClient(source, KUBERNETES_CONFIG_PATH);
  return new RegistrationWatcher({ ...options, lib, kubeConfig });
}
