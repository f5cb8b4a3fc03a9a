/*
 * The `portal.kubernetes` config section (see config.d.ts), read once at plugin start
 * into a typed object with named defaults.
 */
import { readDurationFromConfig, type Config } from '@backstage/config';
import { InputError } from '@backstage/errors';
import { durationToMilliseconds } from '@backstage/types';

/** Default time one request to the API server may take before it counts as failed. */
export const DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS = 10_000;

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

/** How the Kubernetes store reaches its cluster. */
export interface KubernetesStoreConfig {
  /**
   * Where the credentials come from: the pod's service account, a kubeconfig file, or
   * (neither given) the client's defaults (`$KUBECONFIG`, `~/.kube/config`, in-cluster).
   */
  source:
    | { type: 'in-cluster' }
    | { type: 'kubeconfig'; path: string; context?: string }
    | { type: 'default'; context?: string };
  /** Per-request timeout in milliseconds. */
  requestTimeoutMs: number;
  /** Namespaces the portal serves; undefined = every namespace (cluster-wide lists). */
  namespaces?: string[];
}

/** Reads `portal.kubernetes`; throws InputError naming the key when a value is wrong. */
export function readKubernetesStoreConfig(config: Config): KubernetesStoreConfig {
  const section = config.getOptionalConfig('portal.kubernetes');
  const inCluster = section?.getOptionalBoolean('inCluster') ?? false;
  const path = section?.getOptionalString('kubeconfig');
  const context = section?.getOptionalString('context');
  if (inCluster && (path !== undefined || context !== undefined)) {
    throw new InputError(
      'portal.kubernetes.inCluster cannot be combined with kubeconfig or context: choose one way to reach the cluster',
    );
  }
  let source: KubernetesStoreConfig['source'];
  if (inCluster) {
    source = { type: 'in-cluster' };
  } else if (path !== undefined) {
    source = { type: 'kubeconfig', path, context };
  } else {
    source = { type: 'default', context };
  }

  let requestTimeoutMs = DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS;
  if (section?.has('requestTimeout')) {
    requestTimeoutMs = durationToMilliseconds(
      readDurationFromConfig(section, { key: 'requestTimeout' }),
    );
    if (!(requestTimeoutMs > 0)) {
      throw new InputError(
        'portal.kubernetes.requestTimeout must be a positive duration, e.g. "10s" or { seconds: 10 }',
      );
    }
  }

  const namespaces = section?.getOptionalStringArray('namespaces');
  if (namespaces !== undefined) {
    if (namespaces.length === 0) {
      throw new InputError(
        'portal.kubernetes.namespaces must list at least one namespace, or be left out to serve all namespaces',
      );
    }
    for (const namespace of namespaces) {
      if (!DNS1123_LABEL.test(namespace) || namespace.length > 63) {
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
