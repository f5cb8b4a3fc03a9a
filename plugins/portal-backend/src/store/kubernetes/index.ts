/** The PortalStore on Kubernetes custom resources (`portal.storage: kubernetes`). */
export { KubernetesPortalStore, type KubernetesPortalStoreOptions } from './KubernetesPortalStore';
export {
  createKubernetesApi,
  type KubernetesApi,
  type KubeObject,
} from './kubernetesClient';
export {
  readKubernetesStoreConfig,
  DEFAULT_KUBERNETES_REQUEST_TIMEOUT_MS,
  type KubernetesStoreConfig,
} from './kubernetesConfig';
export { createKubernetesStorage } from './createKubernetesStorage';
