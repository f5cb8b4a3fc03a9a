import type {
  LoggerService,
  RootConfigService,
} from '@backstage/backend-plugin-api';
import { KubernetesResourceSource } from '../../resources/KubernetesResourceSource';
import type { PortalStore, ReadOnlyResourceSource } from '../types';
import { KubernetesPortalStore } from './KubernetesPortalStore';
import { createKubernetesApi } from './kubernetesClient';
import { readKubernetesStoreConfig } from './kubernetesConfig';

/**
 * The store and the read-only source of `portal.storage: kubernetes`, sharing one
 * client built now from `portal.kubernetes` (no request is made yet).
 */
export async function createKubernetesStorage(deps: {
  config: RootConfigService;
  logger: LoggerService;
}): Promise<{ store: PortalStore; resources: ReadOnlyResourceSource }> {
  const config = readKubernetesStoreConfig(deps.config);
  const api = await createKubernetesApi({ config, logger: deps.logger });
  deps.logger.info(
    `Portal storage: Kubernetes custom resources (${
      config.namespaces === undefined
        ? 'all namespaces'
        : `namespaces ${config.namespaces.join(', ')}`
    }, request timeout ${config.requestTimeoutMs} ms)`,
  );
  return {
    store: KubernetesPortalStore.fromApi(api, {
      namespaces: config.namespaces,
      logger: deps.logger,
    }),
    resources: KubernetesResourceSource.create({
      api,
      namespaces: config.namespaces,
      logger: deps.logger,
    }),
  };
}
