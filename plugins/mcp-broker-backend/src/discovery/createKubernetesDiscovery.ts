/*
 * Builds the Kubernetes discovery from `mcpBroker.kubernetes` at plugin start: loads
 * client-node (ESM-only) and the kubeconfig now, so a wrong path or context fails start-up with
 * a message naming the key; nothing happens at import time.
 */
import { readFileSync } from 'node:fs';
import type { LoggerService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import type * as k8s from '@kubernetes/client-node';
import type { BrokerServerConfig } from '../config';
import type { KubernetesDiscoveryConfig } from './kubernetesDiscoveryConfig';
import { RegistrationWatcher } from './RegistrationWatcher';

function loadKubeConfig(lib: typeof k8s, config: KubernetesDiscoveryConfig): k8s.KubeConfig {
  const kc = new lib.KubeConfig();
  const { source } = config;
  if (source.type === 'in-cluster') {
    kc.loadFromCluster();
  } else if (source.type === 'kubeconfig') {
    let text: string;
    try {
      text = readFileSync(source.path, 'utf8');
    } catch (error) {
      throw new InputError(`mcpBroker.kubernetes.kubeconfig ${source.path} cannot be read: ${(error as Error).message}`);
    }
    kc.loadFromString(text);
  } else {
    kc.loadFromDefault();
  }
  if (source.type !== 'in-cluster' && source.context !== undefined) {
    if (!kc.getContextObject(source.context)) {
      throw new InputError(`mcpBroker.kubernetes.context "${source.context}" is not in the kubeconfig`);
    }
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new InputError('The kubeconfig for mcpBroker.kubernetes has no current cluster; set context or inCluster');
  }
  return kc;
}

/** Creates (but does not start) the MCPServerRegistration watcher. */
export function createKubernetesDiscovery(options: {
  config: KubernetesDiscoveryConfig;
  logger: LoggerService;
  onServers(servers: BrokerServerConfig[]): void;
}): RegistrationWatcher {
  // A require at call time, not a top-level import (see the portal's kubernetesClient.ts):
  // client-node is loaded only when discovery is configured.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib: typeof k8s = require('@kubernetes/client-node');
  return new RegistrationWatcher({ ...options, lib, kubeConfig: loadKubeConfig(lib, options.config) });
}
