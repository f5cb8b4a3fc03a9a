/*
 * Loads `@kubernetes/client-node` and the kubeconfig at plugin start, never at import time.
 *
 * - client-node 1.x is an ES module; it is loaded with a require at call time (Node's
 *   require(esm)), only when a plugin actually uses Kubernetes. A dynamic import() would be kept
 *   as is by Jest's CommonJS transform and fail there.
 * - The kubeconfig (or the pod's service account) is read now, so a wrong path or an unknown
 *   context fails plugin start with an InputError naming the key; no request is made here.
 */
import { readFileSync } from 'node:fs';
import { InputError } from '@backstage/errors';
import type * as k8s from '@kubernetes/client-node';
import type { KubeConfigSource } from './kubeConfigSource';

/**
 * The client-node module and a kubeconfig loaded from a {@link KubeConfigSource}.
 *
 * @public
 */
export interface LoadedKubernetesClient {
  /** The client-node module (pass it on: code that only imports its types stays light). */
  lib: typeof k8s;
  kubeConfig: k8s.KubeConfig;
}

/**
 * Loads client-node and the kubeconfig `source` describes. `configPath` is the config section
 * the source came from (e.g. `portal.kubernetes`), for messages.
 *
 * @public
 */
export function loadKubernetesClient(
  source: KubeConfigSource,
  configPath: string,
): LoadedKubernetesClient {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const lib: typeof k8s = require('@kubernetes/client-node');
  return { lib, kubeConfig: loadKubeConfig(lib, source, configPath) };
}

function loadKubeConfig(
  lib: typeof k8s,
  source: KubeConfigSource,
  configPath: string,
): k8s.KubeConfig {
  const kc = new lib.KubeConfig();
  switch (source.type) {
    case 'in-cluster':
      kc.loadFromCluster();
      break;
    case 'kubeconfig': {
      let text: string;
      try {
        text = readFileSync(source.path, 'utf8');
      } catch (error) {
        throw new InputError(
          `${configPath}.kubeconfig ${source.path} cannot be read: ${(error as Error).message}`,
        );
      }
      kc.loadFromString(text);
      break;
    }
    default:
      kc.loadFromDefault();
  }
  if (source.type !== 'in-cluster' && source.context !== undefined) {
    if (!kc.getContextObject(source.context)) {
      const contexts = kc
        .getContexts()
        .map(c => c.name)
        .join(', ');
      throw new InputError(
        `${configPath}.context "${source.context}" is not in the kubeconfig ` +
          `(contexts: ${contexts})`,
      );
    }
    kc.setCurrentContext(source.context);
  }
  if (!kc.getCurrentCluster()) {
    throw new InputError(
      `The kubeconfig for ${configPath} has no current cluster; ` +
        `set ${configPath}.context or inCluster`,
    );
  }
  return kc;
}
