/**
 * What the Kubernetes clients of the portal and the MCP broker share over
 * `@kubernetes/client-node` 1.4: kubeconfig and in-cluster loading, per-request timeouts, a
 * list+watch loop with 410 re-list and resume, and the classification of failed calls.
 *
 * @packageDocumentation
 */
export {
  DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  isNamespaceName,
  readKubeConfigSource,
  readPositiveDurationMs,
} from './kubeConfigSource';
export type { KubeConfigSource } from './kubeConfigSource';
export { loadKubernetesClient } from './loadKubernetesClient';
export type { LoadedKubernetesClient } from './loadKubernetesClient';
export { mergePatchOptions, requestTimeoutOptions } from './requestOptions';
export {
  NODE_NETWORK_ERROR_CODES,
  describeKubernetesFailure,
  isTimeoutOrNetworkError,
  kubernetesApiStatusOf,
} from './kubernetesFailures';
export type { KubernetesApiStatus } from './kubernetesFailures';
export { runListWatch } from './listWatch';
export type { ListWatchBackoff, ListWatchOptions, WatchedObject } from './listWatch';
