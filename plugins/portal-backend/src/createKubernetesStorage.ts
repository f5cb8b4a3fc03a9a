/*
 * Wiring of `portal.storage: kubernetes`: the store (store/) and the read-only source
 * (resources/) over one client. It lives beside plugin.ts because it joins both folders;
 * store/ never imports resources/ (resources/ builds on store/'s types and paging).
 */
import type { LoggerService, RootConfigService } from '@backstage/backend-plugin-api';
import { KubernetesResourceSource } from './resources/KubernetesResourceSource';
import { KubernetesPortalStore } from './store/kubernetes/KubernetesPortalStore';
import { createKubernetesApi } from './store/kubernetes/kubernetesClient';
import { readKubernetesStoreConfig } from './store/kubernetes/kubernetesConfig';
import type { PortalStore, ReadOnlyResourceSource } from './store/types';

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
