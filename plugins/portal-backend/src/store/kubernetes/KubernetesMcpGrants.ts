/*
 * The access grant reads of the Kubernetes store (contract mcp-access §3.3, §3.5, §4.8):
 * live grants — Approved access requests of MCP products, unexpired — with their products.
 *
 * - listMcpGrantsPage: the APIKeys that carry the MCP target label (`=<target>` for one
 *   target, the label's presence otherwise; with the product and requester labels when the
 *   filter names them), paged over the API server's own `limit`/`continue`
 *   (kubernetesPaging.ts, so in namespace, name order). The phase (status) and the expiry
 *   are checked on each chunk, the exact target, product and requester too (label values
 *   may be hashes). Each page then reads the products of its keys, once each. A key whose
 *   product vanished meanwhile is left out (its delete is under way).
 * - countLiveGrants: the keys of one product by product label, checked for tier, phase and
 *   expiry.
 */
import type { ApiKeySpec, ObjectRef } from '@devportal/plugin-portal-common';
import { assertGrantFilterNamesNamespace } from '../mcpGrantFilter';
import type { McpGrantFilter, Page, PageRequest, StoredApiProduct, StoredMcpGrant } from '../types';
import { API_KEYS, keyFromObject } from './customResources';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';
import { countLiveKeysOfTier, isLiveAt } from './liveGrants';
import { namespaceSegments, pageSegments } from './kubernetesPaging';
import type { KubernetesProductStore } from './KubernetesProductStore';
import {
  MCP_TARGET_LABEL,
  PRODUCT_LABEL,
  REQUESTER_LABEL,
  entityRefLabelValue,
  mcpTargetLabelValue,
  productLabelValue,
} from './labels';
import type { ServedNamespaces } from './ServedNamespaces';

/** What {@link KubernetesMcpGrants} reads with. */
export interface KubernetesMcpGrantsParts {
  api: KubernetesApi;
  namespaces: ServedNamespaces;
  products: KubernetesProductStore;
  keys: KubernetesKeyObjects;
}

/** The access grant reads of the Kubernetes `PortalStore`. See the comment at the top of this file. */
export class KubernetesMcpGrants {
  readonly #parts: KubernetesMcpGrantsParts;

  constructor(parts: KubernetesMcpGrantsParts) {
    this.#parts = parts;
  }

  /** See `PortalStore.listMcpGrantsPage` and the comment at the top of this file. */
  async listMcpGrantsPage(
    filter: McpGrantFilter,
    now: Date,
    page: PageRequest,
  ): Promise<Page<StoredMcpGrant>> {
    assertGrantFilterNamesNamespace(filter);
    const { api, namespaces: served, products } = this.#parts;
    const namespaces = served.scope(filter.namespace);
    if (namespaces?.length === 0) {
      return { items: [] };
    }
    const { targetKind, targetName, productName, requestedBy } = filter;
    const terms = [
      targetKind !== undefined && targetName !== undefined
        ? `${MCP_TARGET_LABEL}=${mcpTargetLabelValue({ kind: targetKind, name: targetName })}`
        : MCP_TARGET_LABEL,
      productName === undefined ? undefined : `${PRODUCT_LABEL}=${productLabelValue(productName)}`,
      requestedBy === undefined
        ? undefined
        : `${REQUESTER_LABEL}=${entityRefLabelValue(requestedBy)}`,
    ].filter((term): term is string => term !== undefined);
    const matches = (key: KubeObject) => {
      const spec = key.spec as ApiKeySpec | undefined;
      return (
        isLiveAt(key, now) &&
        spec?.mcpTarget !== undefined &&
        (targetKind === undefined || spec.mcpTarget.kind === targetKind) &&
        (targetName === undefined || spec.mcpTarget.name === targetName) &&
        (productName === undefined || spec.apiProductRef.name === productName) &&
        (requestedBy === undefined || spec.requestedBy.userId === requestedBy)
      );
    };
    const { items, cursor } = await pageSegments(
      namespaceSegments(namespaces, terms.join(',')),
      options => api.listCustomChunk(API_KEYS, options),
      matches,
      page,
    );
    // Each product of the page is read once, and the reads run together.
    const productsOfPage = new Map<string, Promise<StoredApiProduct | undefined>>();
    const withProducts = items.map(object => {
      const key = keyFromObject(object);
      const ref = { namespace: key.metadata.namespace, name: key.spec.apiProductRef.name };
      const id = `${ref.namespace}/${ref.name}`;
      if (!productsOfPage.has(id)) productsOfPage.set(id, products.getProduct(ref));
      return productsOfPage.get(id)!.then(product => ({ key, product }));
    });
    const grants: StoredMcpGrant[] = [];
    for (const { key, product } of await Promise.all(withProducts)) {
      if (product !== undefined) grants.push({ key, product });
    }
    return { items: grants, cursor };
  }

  /** See `PortalStore.countLiveGrants`. */
  async countLiveGrants(product: ObjectRef, tier: string, now: Date): Promise<number> {
    if (this.#parts.namespaces.scope(product.namespace)?.length === 0) {
      return 0;
    }
    return countLiveKeysOfTier(this.#parts.keys, product, tier, now);
  }
}
