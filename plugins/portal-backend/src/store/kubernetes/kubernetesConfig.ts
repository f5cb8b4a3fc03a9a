/*
 * The `portal.kubernetes` config section (see config.d.ts), read once at plugin start
 * into a typed object with named defaults.
 */
import type { Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import {
  DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  isNamespaceName,
  readKubeConfigSource,
  readPositiveDurationMs,
  type KubeConfigSource,
} from '@devportal/backend-kubernetes-client';

export { DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS };

/** The config section this file reads, for messages. */
export const KUBERNETES_CONFIG_PATH = 'portal.kubernetes';

/** How the Kubernetes store reaches its cluster. */
export interface KubernetesStoreConfig {
  /**
   * Where the credentials come from: the pod's service account, a kubeconfig file, or
   * (neither given) the client's defaults (`$KUBECONFIG`, `~/.kube/config`, in-cluster).
   */
  source: KubeConfigSource;
  /** Per-request timeout in milliseconds. */
  requestTimeoutMs: number;
  /** Namespaces the portal serves; undefined = every namespace (cluster-wide lists). */
  namespaces?: string[];
}

/** Reads `portal.kubernetes`; throws InputError naming the key when a value is wrong. */
export function readKubernetesStoreConfig(config: Config): KubernetesStoreConfig {
  const section = config.getOptionalConfig('portal.kubernetes');
  const source = readKubeConfigSource(section, KUBERNETES_CONFIG_PATH);
  const requestTimeoutMs = readPositiveDurationMs(section, 'requestTimeout', {
    configPath: KUBERNETES_CONFIG_PATH,
    fallbackMs: DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  });

  const namespaces = section?.getOptionalStringArray('namespaces');
  if (namespaces !== undefined) {
    if (namespaces.length === 0) {
      throw new InputError(
        'portal.kubernetes.namespaces must list at least one namespace, or be left out to serve all namespaces',
      );
    }
    for (const namespace of namespaces) {
      if (!isNamespaceName(namespace)) {
        throw new InputError(
          `portal.kubernetes.namespaces: "${namespace}" is not a namespace name (a lowercase DNS-1123 label)`,
        );
      }
    }
  }
  return {
    source,
    requestTimeoutMs,
    namespaces: namespaces === undefined ? undefined : [...new Set(namespaces)].sort(),
  };
}
