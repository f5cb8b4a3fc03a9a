/*
 * The APIProduct custom resources of the Kubernetes store.
 *
 * - Lists use the owner label selector (entity refs hashed because they are not valid
 *   label values) and the MCP target label (contract mcp-access §3.5: on products of an MCP
 *   server or endpoint only), then re-check the exact owner annotation and target on the
 *   few objects selected.
 * - replaceProduct: PUT with the given resourceVersion (checked first against the
 *   current one, so an odd version string is a ConflictError, not a validation error).
 *   Tiers that must be unused are counted before the PUT: the API server has no
 *   transaction across a product and its keys, so an approval between the count and the
 *   PUT keeps a tier the product no longer has (the database store closes that gap).
 * - deleteProduct first marks the product (annotation), then deletes its keys, then the
 *   product (uid precondition). A delete that fails part-way leaves the product marked;
 *   a retry completes it, and no key can be added meanwhile (the key request store
 *   refuses a marked product, see {@link isMarkedForDeletion}).
 */
import { ConflictError, NotFoundError } from '@backstage/errors';
import {
  OWNER_ANNOTATION,
  isMcpTarget,
  type ApiProductSpec,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { ownerOf, refText } from '../productOwner';
import { tierInUseError } from '../planTierConflicts';
import type {
  NewApiProduct,
  Page,
  PageRequest,
  ProductFilter,
  StoredApiProduct,
  UnusedTiersCondition,
} from '../types';
import { AlreadyExistsError } from './AlreadyExistsError';
import { byNamespaceAndName } from './byNamespaceAndName';
import { API_PRODUCTS, nowTimestamp, productFromObject } from './customResources';
import { isConflict, isNotFound } from './errorChecks';
import type { KubeObject, KubernetesApi } from './kubernetesClient';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';
import { countLiveKeysOfTier } from './liveGrants';
import { namespaceSegments, pageSegments } from './kubernetesPaging';
import {
  DELETING_ANNOTATION,
  MCP_TARGET_LABEL,
  OWNER_LABEL,
  assertNoReservedKeys,
  entityRefLabelValue,
  inSelector,
  mcpTargetLabelValue,
  reservedKeysOf,
} from './labels';
import type { ServedNamespaces } from './ServedNamespaces';

/** Whether a product's delete has started (our mark, or Kubernetes' own). */
export function isMarkedForDeletion(product: KubeObject): boolean {
  return (
    product.metadata.annotations?.[DELETING_ANNOTATION] !== undefined ||
    product.metadata.deletionTimestamp !== undefined
  );
}

/** The target label of a product with this spec (none for an HTTPRoute product). */
function targetLabels(spec: Pick<ApiProductSpec, 'targetRef'>): Record<string, string> {
  return isMcpTarget(spec.targetRef)
    ? { [MCP_TARGET_LABEL]: mcpTargetLabelValue(spec.targetRef) }
    : {};
}

/**
 * The label-selector terms of a product filter (owner; target: the target label, its
 * presence for a kind of MCP target, its absence for HTTPRoutes) and the exact re-check of
 * what the labels only narrow (owner refs are hashed, target values may be).
 */
function productFilterTerms(
  filter: Pick<ProductFilter, 'ownerRefs' | 'targetKind' | 'targetName'>,
) {
  const { ownerRefs, targetKind, targetName } = filter;
  let targetTerm: string | undefined;
  if (targetKind === 'HTTPRoute') {
    targetTerm = `!${MCP_TARGET_LABEL}`;
  } else if (targetKind !== undefined) {
    targetTerm =
      targetName === undefined
        ? MCP_TARGET_LABEL
        : `${MCP_TARGET_LABEL}=${mcpTargetLabelValue({ kind: targetKind, name: targetName })}`;
  }
  const terms = [
    ownerRefs === undefined
      ? undefined
      : inSelector(OWNER_LABEL, ownerRefs.map(entityRefLabelValue)),
    targetTerm,
  ].filter((term): term is string => term !== undefined);
  return {
    labelSelector: terms.length === 0 ? undefined : terms.join(','),
    matches: (o: KubeObject) =>
      (ownerRefs === undefined ||
        ownerRefs.includes(o.metadata.annotations?.[OWNER_ANNOTATION] ?? '')) &&
      (targetKind === undefined || o.spec?.targetRef?.kind === targetKind) &&
      (targetName === undefined || o.spec?.targetRef?.name === targetName),
  };
}

/** `labels` without the target label (a replace writes it anew from the spec). */
function withoutTargetLabel(labels: Record<string, string>): Record<string, string> {
  const { [MCP_TARGET_LABEL]: _target, ...rest } = labels;
  return rest;
}

/** The products of the Kubernetes `PortalStore`: APIProduct custom resources. */
export class KubernetesProductStore {
  constructor(
    private readonly api: KubernetesApi,
    private readonly namespaces: ServedNamespaces,
    private readonly keys: KubernetesKeyObjects,
  ) {}

  /** The APIProduct object; undefined when it does not exist or its namespace is not served. */
  async readObject(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.namespaces.getCustom(this.api, API_PRODUCTS, ref);
  }

  /** See `PortalStore.createProduct`. */
  async createProduct(product: NewApiProduct): Promise<StoredApiProduct> {
    this.namespaces.assertServed(product.namespace);
    assertNoReservedKeys('labels', product.labels);
    assertNoReservedKeys('annotations', product.annotations);
    const owner = ownerOf(product.annotations);
    try {
      const created = await this.api.createCustom(API_PRODUCTS, product.namespace, {
        apiVersion: `${API_PRODUCTS.group}/${API_PRODUCTS.version}`,
        kind: API_PRODUCTS.kind,
        metadata: {
          namespace: product.namespace,
          name: product.name,
          labels: {
            ...product.labels,
            [OWNER_LABEL]: entityRefLabelValue(owner),
            ...targetLabels(product.spec),
          },
          annotations: { ...product.annotations },
        },
        spec: product.spec,
      });
      return productFromObject(created);
    } catch (error) {
      if (error instanceof AlreadyExistsError) {
        throw new ConflictError(`API product ${refText(product)} already exists`);
      }
      throw error;
    }
  }

  /** See `PortalStore.getProduct`. */
  async getProduct(ref: ObjectRef): Promise<StoredApiProduct | undefined> {
    const object = await this.readObject(ref);
    return object === undefined ? undefined : productFromObject(object);
  }

  /** See `PortalStore.listProducts`. */
  async listProducts(filter: ProductFilter): Promise<StoredApiProduct[]> {
    const products = await this.listObjects(filter.namespace, filter.ownerRefs, filter);
    return products.map(productFromObject).sort(byNamespaceAndName);
  }

  /** See `PortalStore.listProductsPage`. */
  async listProductsPage(
    filter: ProductFilter,
    page: PageRequest,
  ): Promise<Page<StoredApiProduct>> {
    const namespaces = this.namespaces.scope(filter.namespace);
    if (filter.ownerRefs?.length === 0 || namespaces?.length === 0) {
      return { items: [] };
    }
    const { labelSelector, matches } = productFilterTerms(filter);
    const { items, cursor } = await pageSegments(
      namespaceSegments(namespaces, labelSelector),
      options => this.api.listCustomChunk(API_PRODUCTS, options),
      matches,
      page,
    );
    return { items: items.map(productFromObject), cursor };
  }

  /**
   * Products by owner- and target-label selector, re-checked against the exact owner
   * annotation and target.
   */
  async listObjects(
    namespace: string | undefined,
    ownerRefs: string[] | undefined,
    target: Pick<ProductFilter, 'targetKind' | 'targetName'> = {},
  ): Promise<KubeObject[]> {
    const namespaces = this.namespaces.scope(namespace);
    if (ownerRefs?.length === 0 || namespaces?.length === 0) {
      return [];
    }
    const { labelSelector, matches } = productFilterTerms({ ownerRefs, ...target });
    const objects = await this.api.listCustom(API_PRODUCTS, { namespaces, labelSelector });
    return objects.filter(matches);
  }

  /** See `PortalStore.replaceProduct` and the comment at the top of this file. */
  async replaceProduct(
    product: StoredApiProduct,
    unused?: UnusedTiersCondition,
  ): Promise<StoredApiProduct> {
    const { namespace, name, resourceVersion } = product.metadata;
    const ref = { namespace, name };
    assertNoReservedKeys('labels', product.metadata.labels);
    assertNoReservedKeys('annotations', product.metadata.annotations);
    const owner = ownerOf(product.metadata.annotations);
    const current = await this.readObject(ref);
    if (current === undefined) {
      throw new NotFoundError(`API product ${refText(ref)} not found`);
    }
    const stale = () =>
      new ConflictError(
        `API product ${refText(ref)} was modified: resourceVersion ${resourceVersion} is not the current one; read it again and retry`,
      );
    if (current.metadata.resourceVersion !== resourceVersion) {
      throw stale();
    }
    if (unused !== undefined) {
      for (const tier of unused.tiers) {
        const count = await countLiveKeysOfTier(this.keys, ref, tier, unused.now);
        if (count > 0) throw tierInUseError(tier, count);
      }
    }
    try {
      const replaced = await this.api.replaceCustom(API_PRODUCTS, namespace, name, {
        apiVersion: current.apiVersion,
        kind: current.kind,
        metadata: {
          namespace,
          name,
          resourceVersion,
          labels: {
            ...product.metadata.labels,
            ...withoutTargetLabel(reservedKeysOf(current.metadata.labels)),
            [OWNER_LABEL]: entityRefLabelValue(owner),
            ...targetLabels(product.spec),
          },
          annotations: {
            ...product.metadata.annotations,
            ...reservedKeysOf(current.metadata.annotations),
          },
          ...(current.metadata.ownerReferences !== undefined && {
            ownerReferences: current.metadata.ownerReferences,
          }),
          ...(current.metadata.finalizers !== undefined && {
            finalizers: current.metadata.finalizers,
          }),
        },
        spec: product.spec,
      });
      return productFromObject(replaced);
    } catch (error) {
      if (isConflict(error)) {
        throw stale();
      }
      if (isNotFound(error)) {
        throw new NotFoundError(`API product ${refText(ref)} not found`);
      }
      throw error;
    }
  }

  /** See `PortalStore.deleteProduct` and the comment at the top of this file. */
  async deleteProduct(ref: ObjectRef): Promise<void> {
    const missing = () => new NotFoundError(`API product ${refText(ref)} not found`);
    const product = await this.readObject(ref);
    if (product === undefined) {
      throw missing();
    }
    try {
      if (product.metadata.annotations?.[DELETING_ANNOTATION] === undefined) {
        // From here on createKey refuses the product, and a retry knows to finish.
        await this.api.mergePatchCustom(API_PRODUCTS, ref.namespace, ref.name, {
          metadata: { annotations: { [DELETING_ANNOTATION]: nowTimestamp() } },
        });
      }
      for (const key of await this.keys.ofProduct(ref)) {
        await this.keys.delete(key);
      }
      await this.api.deleteCustom(API_PRODUCTS, ref.namespace, ref.name, {
        uid: product.metadata.uid,
      });
    } catch (error) {
      throw isNotFound(error) ? missing() : error;
    }
  }
}
