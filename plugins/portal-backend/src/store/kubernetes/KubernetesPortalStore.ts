/*
 * KubernetesPortalStore: the PortalStore on custom resources (`portal.storage:
 * kubernetes`), through @kubernetes/client-node. Mapping: customResources.ts.
 *
 * This class is the composition (../ComposedPortalStore.ts): each resource has its own
 * file, and each file's comment names its guarantees.
 * - KubernetesProductStore.ts: APIProducts (owner-label lists, replace on the given
 *   resourceVersion, the marked cascade delete);
 * - KubernetesKeyRequestStore.ts: APIKeys from request to review (compare-and-set on
 *   resourceVersion, never read-check-write alone: keyCompareAndSet.ts; one Pending
 *   request per requester, product and tier: pendingClaims.ts; no key outlives its
 *   product);
 * - KubernetesKeySecrets.ts: the Secrets of approved keys (created before the status
 *   points at them; revealed exactly once);
 * - KubernetesKeyExpiryClaims.ts: claiming expired keys' announcements once (an annotation
 *   written on the resourceVersion read);
 * - KubernetesMcpGrants.ts: live access grants, by the MCP target label (contract
 *   mcp-access §3.5);
 * - KubernetesKeyObjects.ts: reading APIKeys and deleting them with their Secrets, for
 *   the two stores above;
 * - ServedNamespaces.ts: with `portal.kubernetes.namespaces`, lists are per namespace and
 *   other namespaces do not exist for the portal.
 *
 * Failure modes: every API error is mapped once, in kubernetesErrors.ts (404, 409,
 * 400/422, 401/403 → logged 503, 429/5xx/timeouts → 503). Nothing here logs record
 * contents, and never a secret.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { ComposedPortalStore } from '../ComposedPortalStore';
import type { PortalStore } from '../types';
import { createKubernetesApi, type KubernetesApi } from './kubernetesClient';
import type { KubernetesStoreConfig } from './kubernetesConfig';
import { KubernetesKeyObjects } from './KubernetesKeyObjects';
import { KubernetesKeyRequestStore } from './KubernetesKeyRequestStore';
import { KubernetesKeySecrets } from './KubernetesKeySecrets';
import { KubernetesMcpGrants } from './KubernetesMcpGrants';
import { KubernetesProductStore } from './KubernetesProductStore';
import { ServedNamespaces } from './ServedNamespaces';

/** Options of {@link KubernetesPortalStore.create}. */
export interface KubernetesPortalStoreOptions {
  config: KubernetesStoreConfig;
  logger: LoggerService;
}

/**
 * The {@link PortalStore} on Kubernetes custom resources. See the comment at the top of
 * this file for the parts it is made of.
 */
export class KubernetesPortalStore extends ComposedPortalStore implements PortalStore {
  /** Builds the Kubernetes client from config (no request is made yet). */
  static async create(options: KubernetesPortalStoreOptions): Promise<KubernetesPortalStore> {
    const api = await createKubernetesApi(options);
    return new KubernetesPortalStore(api, options.config.namespaces, options.logger);
  }

  /** A store over an already built API (tests, or a caller sharing one client). */
  static fromApi(
    api: KubernetesApi,
    options: { namespaces?: string[]; logger: LoggerService },
  ): KubernetesPortalStore {
    return new KubernetesPortalStore(api, options.namespaces, options.logger);
  }

  private constructor(
    api: KubernetesApi,
    servedNamespaces: string[] | undefined,
    logger: LoggerService,
  ) {
    const namespaces = new ServedNamespaces(servedNamespaces);
    const keyObjects = new KubernetesKeyObjects(api, namespaces, logger);
    const secrets = new KubernetesKeySecrets(api, keyObjects, logger);
    const products = new KubernetesProductStore(api, namespaces, keyObjects);
    super({
      products,
      keys: new KubernetesKeyRequestStore({
        api,
        namespaces,
        products,
        keys: keyObjects,
        secrets,
      }),
      grants: new KubernetesMcpGrants({ api, namespaces, products, keys: keyObjects }),
      secrets,
    });
  }
}
