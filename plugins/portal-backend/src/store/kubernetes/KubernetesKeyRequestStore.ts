/*
 * The API key requests of the Kubernetes store: APIKey custom resources from request to
 * review, with their Secrets through KubernetesKeySecrets.
 *
 * Guarantees, each from a compare-and-set on resourceVersion (a 409 from the API
 * server), never from read-check-write alone (keyCompareAndSet.ts):
 * - reviewKey / updatePendingKey: read the key, check its phase, write with
 *   `metadata.resourceVersion` of that read; a 409 means someone else wrote first, so
 *   read again and decide again. An approval's Secret comes first (KubernetesKeySecrets).
 * - Duplicate Pending requests: a claim object per (requester, product, tier), see
 *   pendingClaims.ts.
 * - createKey vs deleteProduct: createKey re-reads the product after creating the key
 *   and removes the key again if the product is marked or gone, so no key outlives its
 *   product (KubernetesProductStore.ts has the other half).
 *
 * Lists use label selectors (requester, product labels written by the store; entity refs
 * hashed because they are not valid label values), then re-check the exact refs on the
 * few objects selected. The phase filter is applied to the selected keys in memory: the
 * phase lives in the status subresource, which cannot update a label in the same write.
 */
import { InputError, NotFoundError } from '@backstage/errors';
import {
  isMcpTarget,
  type ApiKey,
  type ApiProductSpec,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { generateKeyName } from '../generateKeyName';
import { refText } from '../productOwner';
import type {
  KeyFilter,
  KeyReview,
  NewApiKey,
  Page,
  PageRequest,
  PendingKeyUpdate,
} from '../types';
import { AlreadyExistsError } from './AlreadyExistsError';
import { byNamespaceAndName } from './byNamespaceAndName';
import {
  API_KEYS,
  keyFromObject,
  keySpec,
  nowTimestamp,
  ownerReferenceTo,
  phaseOf,
  type StoredKeyStatus,
} from './customResources';
import { isConflict, isNotFound } from './errorChecks';
import {
  MAX_CAS_ATTEMPTS,
  assertKeyPhase,
  keyKeptChanging,
  rethrowUnlessLostRace,
} from './keyCompareAndSet';
import type { KubeObject, KubernetesApi, NamespaceScope } from './kubernetesClient';
import { KubernetesKeyExpiryClaims } from './KubernetesKeyExpiryClaims';
import type { KubernetesKeyObjects } from './KubernetesKeyObjects';
import type { KubernetesKeySecrets } from './KubernetesKeySecrets';
import { namespaceSegments, pageSegments, type ListSegment } from './kubernetesPaging';
import { isMarkedForDeletion, type KubernetesProductStore } from './KubernetesProductStore';
import {
  MCP_TARGET_LABEL,
  PRODUCT_LABEL,
  REQUESTER_LABEL,
  entityRefLabelValue,
  inSelector,
  mcpTargetLabelValue,
  productLabelValue,
} from './labels';
import { acquirePendingClaim } from './pendingClaims';
import type { ServedNamespaces } from './ServedNamespaces';

/** Attempts at a fresh generated key name when one is taken (odds ~1e-11 each). */
const KEY_NAME_ATTEMPTS = 5;

/** What {@link KubernetesKeyRequestStore} works with. */
export interface KubernetesKeyRequestStoreParts {
  api: KubernetesApi;
  namespaces: ServedNamespaces;
  products: KubernetesProductStore;
  keys: KubernetesKeyObjects;
  secrets: KubernetesKeySecrets;
}

/** The key requests of the Kubernetes `PortalStore`: APIKey custom resources. */
export class KubernetesKeyRequestStore {
  private readonly api: KubernetesApi;
  private readonly namespaces: ServedNamespaces;
  private readonly products: KubernetesProductStore;
  private readonly keys: KubernetesKeyObjects;
  private readonly secrets: KubernetesKeySecrets;
  private readonly expiryClaims: KubernetesKeyExpiryClaims;

  constructor(parts: KubernetesKeyRequestStoreParts) {
    this.api = parts.api;
    this.namespaces = parts.namespaces;
    this.products = parts.products;
    this.keys = parts.keys;
    this.secrets = parts.secrets;
    this.expiryClaims = new KubernetesKeyExpiryClaims(parts.api, parts.namespaces, parts.keys);
  }

  /** See `PortalStore.createKey` and the comment at the top of this file. */
  async createKey(key: NewApiKey): Promise<ApiKey> {
    const productName = key.spec.apiProductRef.name;
    const productRef = { namespace: key.namespace, name: productName };
    const missingProduct = () => new NotFoundError(`API product ${refText(productRef)} not found`);
    const product = await this.products.readObject(productRef);
    if (product === undefined || isMarkedForDeletion(product)) {
      throw missingProduct();
    }

    const created = await this.createKeyObject(key, product);
    const ref = { namespace: key.namespace, name: created.metadata.name! };
    let secretName: string | undefined;
    try {
      const spec = created.spec;
      if (key.approval === undefined) {
        await acquirePendingClaim(this.api, created, {
          requester: spec.requestedBy.userId,
          product: productName,
          planTier: spec.planTier,
        });
      }
      // The product may have been deleted since the first read; see the file comment.
      const productNow = await this.products.readObject(productRef);
      if (
        productNow === undefined ||
        productNow.metadata.uid !== product.metadata.uid ||
        isMarkedForDeletion(productNow)
      ) {
        throw missingProduct();
      }
      const secret = key.approval?.secret;
      if (key.approval !== undefined && secret !== undefined) {
        secretName = await this.secrets.create(created, { ...key.approval, secret });
      }
    } catch (error) {
      await this.keys.discard(created);
      throw error;
    }

    const now = nowTimestamp();
    const status: StoredKeyStatus =
      key.approval === undefined
        ? { phase: 'Pending', secretRevealed: false }
        : {
            phase: 'Approved',
            reviewedBy: key.approval.reviewedBy,
            reviewedAt: now,
            ...(key.approval.reason !== undefined && { reason: key.approval.reason }),
            secretRevealed: false,
            ...(secretName !== undefined && { secretRef: { name: secretName } }),
          };
    try {
      const written = await this.api.mergePatchCustomStatus(API_KEYS, ref.namespace, ref.name, {
        metadata: { resourceVersion: created.metadata.resourceVersion },
        status,
      });
      return keyFromObject(written);
    } catch (error) {
      if (!isConflict(error) && !isNotFound(error)) {
        // Unknown outcome of the status write: remove the key rather than leave it half-made.
        await this.keys.discard(created);
        throw error;
      }
      // Someone acted on the new key first (reviewed or deleted it): report what is there.
      if (secretName !== undefined) {
        await this.secrets.discard(ref.namespace, secretName);
      }
      const current = await this.keys.read(ref);
      if (current === undefined) {
        throw new NotFoundError(`API key ${refText(ref)} was deleted while being created`);
      }
      return keyFromObject(current);
    }
  }

  private async createKeyObject(key: NewApiKey, product: KubeObject): Promise<KubeObject> {
    const productName = key.spec.apiProductRef.name;
    // An MCP product's target never changes (contract mcp-access §3.3): a copy holds.
    const targetRef = (product.spec as ApiProductSpec).targetRef;
    const mcpTarget = isMcpTarget(targetRef)
      ? { kind: targetRef.kind, name: targetRef.name }
      : undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.api.createCustom(API_KEYS, key.namespace, {
          apiVersion: `${API_KEYS.group}/${API_KEYS.version}`,
          kind: API_KEYS.kind,
          metadata: {
            namespace: key.namespace,
            name: generateKeyName(productName),
            labels: {
              [REQUESTER_LABEL]: entityRefLabelValue(key.spec.requestedBy.userId),
              [PRODUCT_LABEL]: productLabelValue(productName),
              ...(mcpTarget !== undefined && {
                [MCP_TARGET_LABEL]: mcpTargetLabelValue(mcpTarget),
              }),
            },
            ownerReferences: [ownerReferenceTo(product, 'APIProduct')],
          },
          spec: keySpec({ ...key.spec, ...(mcpTarget !== undefined && { mcpTarget }) }),
        });
      } catch (error) {
        // A taken name: draw again. Anything else is the answer.
        if (!(error instanceof AlreadyExistsError) || attempt >= KEY_NAME_ATTEMPTS) {
          throw error;
        }
      }
    }
  }

  /** See `PortalStore.getKey`. */
  async getKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    const object = await this.keys.read(ref);
    return object === undefined ? undefined : keyFromObject(object);
  }

  /**
   * What both key listings start from: the namespaces to read (undefined: every namespace;
   * the listing is empty when the filter's namespace is outside the configured ones), the
   * product's selector term, the selector of the filter without an ownership part, and the
   * exact re-check of every condition. A filter by the products' owners becomes a selector of
   * those products' keys (undefined, an empty listing, when they own none).
   */
  async #keyQuery(filter: KeyFilter) {
    if (filter.productName !== undefined && filter.namespace === undefined) {
      throw new InputError('A key filter by product name needs the namespace');
    }
    const namespaces = this.namespaces.scope(filter.namespace);
    if (namespaces?.length === 0) {
      return undefined;
    }
    const terms = keyFilterTerms(filter);
    let { productTerm, matches } = terms;
    if (filter.productOwnerRefs !== undefined) {
      const { owned, productSelector } = await this.ownedProducts(filter, filter.productOwnerRefs);
      if (productSelector === undefined) {
        return undefined;
      }
      productTerm = productSelector;
      matches = k =>
        terms.matches(k) && owned.has(`${k.metadata.namespace}/${k.spec?.apiProductRef?.name}`);
    }
    return {
      namespaces,
      productTerm,
      matches,
      selector: selector(
        productTerm,
        filter.requestedBy === undefined ? undefined : requesterTerm(filter.requestedBy),
      ),
    };
  }

  /** See `PortalStore.listKeys`. */
  async listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    const query = await this.#keyQuery(filter);
    if (!query) {
      return [];
    }
    const { namespaces, productTerm, matches } = query;

    let objects: KubeObject[];
    if (filter.ownedBy === undefined) {
      objects = await this.api.listCustom(API_KEYS, {
        namespaces,
        labelSelector: query.selector,
      });
    } else {
      const { userRef, ownershipRefs } = filter.ownedBy;
      const asRequester =
        filter.requestedBy === undefined || filter.requestedBy === userRef
          ? this.api.listCustom(API_KEYS, {
              namespaces,
              labelSelector: selector(productTerm, requesterTerm(userRef)),
            })
          : Promise.resolve([]);
      const [mine, ofOwnedProducts] = await Promise.all([
        asRequester,
        this.keysOfOwnedProducts(filter, ownershipRefs, namespaces),
      ]);
      const requested = mine.filter(k => k.spec?.requestedBy?.userId === userRef);
      const seen = new Set(requested.map(k => k.metadata.uid));
      objects = [...requested, ...ofOwnedProducts.filter(k => !seen.has(k.metadata.uid))];
    }

    return objects.filter(matches).map(keyFromObject).sort(byNamespaceAndName);
  }

  /**
   * `PortalStore.listKeysPage`: one page of keys (see kubernetesPaging.ts). The
   * ownership filter walks two disjoint selector lists one after the other: the caller's
   * own requests, then the other requests for the caller's products (`requester!=` the
   * caller).
   */
  async listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>> {
    const query = await this.#keyQuery(filter);
    if (!query) {
      return { items: [] };
    }
    const { namespaces, productTerm, matches } = query;

    let segments: ListSegment[];
    let keep = matches;
    if (filter.ownedBy === undefined) {
      segments = namespaceSegments(namespaces, query.selector);
    } else {
      const { userRef, ownershipRefs } = filter.ownedBy;
      const mine =
        filter.requestedBy === undefined || filter.requestedBy === userRef
          ? namespaceSegments(namespaces, selector(productTerm, requesterTerm(userRef)))
          : [];
      const { owned, productSelector } = await this.ownedProducts(filter, ownershipRefs);
      const ofOwnedProducts =
        productSelector === undefined
          ? []
          : namespaceSegments(
              namespaces,
              selector(
                productSelector,
                filter.requestedBy === undefined
                  ? requesterTerm(userRef, '!=')
                  : requesterTerm(filter.requestedBy),
              ),
            );
      segments = [...mine, ...ofOwnedProducts];
      keep = k =>
        matches(k) &&
        (k.spec?.requestedBy?.userId === userRef ||
          owned.has(`${k.metadata.namespace}/${k.spec?.apiProductRef?.name}`));
    }
    const { items, cursor } = await pageSegments(
      segments,
      options => this.api.listCustomChunk(API_KEYS, options),
      keep,
      page,
    );
    return { items: items.map(keyFromObject), cursor };
  }

  /**
   * The products owned by one of `ownershipRefs` (within the filter's namespace and
   * product): their `namespace/name` set and a label selector for their keys
   * (undefined when there are none).
   */
  private async ownedProducts(filter: KeyFilter, ownershipRefs: string[]) {
    let products = await this.products.listObjects(filter.namespace, ownershipRefs);
    if (filter.productName !== undefined) {
      products = products.filter(p => p.metadata.name === filter.productName);
    }
    return {
      owned: new Set(products.map(p => `${p.metadata.namespace}/${p.metadata.name}`)),
      productSelector:
        products.length === 0
          ? undefined
          : inSelector(
              PRODUCT_LABEL,
              products.map(p => productLabelValue(p.metadata.name!)),
            ),
    };
  }

  /** Keys of the products owned by one of `ownershipRefs`: two selector-driven lists. */
  private async keysOfOwnedProducts(
    filter: KeyFilter,
    ownershipRefs: string[],
    namespaces: NamespaceScope,
  ): Promise<KubeObject[]> {
    const { owned, productSelector } = await this.ownedProducts(filter, ownershipRefs);
    if (productSelector === undefined) {
      return [];
    }
    const keys = await this.api.listCustom(API_KEYS, {
      namespaces,
      labelSelector: selector(
        productSelector,
        filter.requestedBy === undefined ? undefined : requesterTerm(filter.requestedBy),
      ),
    });
    // Same product name in a namespace where the caller owns nothing: not theirs.
    return keys.filter(k => owned.has(`${k.metadata.namespace}/${k.spec?.apiProductRef?.name}`));
  }

  /** See `PortalStore.updatePendingKey`. */
  async updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey> {
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.keys.require(ref);
      assertKeyPhase(ref, current, 'Pending', 'edited');
      const tier = update.planTier ?? current.spec.planTier;
      if (tier !== current.spec.planTier) {
        await acquirePendingClaim(this.api, current, {
          requester: current.spec.requestedBy.userId,
          product: current.spec.apiProductRef.name,
          planTier: tier,
        });
      }
      const spec: Record<string, unknown> = {};
      if (update.planTier !== undefined) spec.planTier = update.planTier;
      if (update.useCase !== undefined) spec.useCase = update.useCase;
      // `null` in a merge patch removes the field.
      if (update.expiresAt !== undefined) spec.expiresAt = update.expiresAt;
      try {
        const patched = await this.api.mergePatchCustom(API_KEYS, ref.namespace, ref.name, {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          spec,
        });
        return keyFromObject(patched);
      } catch (error) {
        rethrowUnlessLostRace(ref, error);
      }
    }
    throw keyKeptChanging(ref);
  }

  /** See `PortalStore.reviewKey`. */
  async reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey> {
    const verb = review.phase === 'Approved' ? 'approved' : 'rejected';
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.keys.require(ref);
      assertKeyPhase(ref, current, 'Pending', verb);
      const secretName =
        review.phase === 'Approved' && review.secret !== undefined
          ? await this.secrets.create(current, { ...review, secret: review.secret })
          : undefined;
      const status: StoredKeyStatus = {
        phase: review.phase,
        reviewedBy: review.reviewedBy,
        reviewedAt: nowTimestamp(),
        ...(review.reason !== undefined && { reason: review.reason }),
        secretRevealed: false,
        ...(secretName !== undefined && { secretRef: { name: secretName } }),
      };
      try {
        const written = await this.api.mergePatchCustomStatus(API_KEYS, ref.namespace, ref.name, {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          status,
        });
        return keyFromObject(written);
      } catch (error) {
        if (secretName !== undefined) {
          await this.secrets.discard(ref.namespace, secretName);
        }
        rethrowUnlessLostRace(ref, error);
      }
    }
    throw keyKeptChanging(ref);
  }

  /** See `PortalStore.deleteKey`. */
  async deleteKey(ref: ObjectRef): Promise<void> {
    const current = await this.keys.require(ref);
    try {
      await this.keys.delete(current);
    } catch (error) {
      throw isNotFound(error) ? new NotFoundError(`API key ${refText(ref)} not found`) : error;
    }
  }

  /** See `PortalStore.claimExpiryAnnouncements` (KubernetesKeyExpiryClaims.ts). */
  claimExpiryAnnouncements(now: Date, limit: number): Promise<ApiKey[]> {
    return this.expiryClaims.claim(now, limit);
  }
}

/** The defined terms joined into one label selector; undefined when there are none. */
function selector(...terms: Array<string | undefined>): string | undefined {
  const defined = terms.filter((t): t is string => t !== undefined);
  return defined.length === 0 ? undefined : defined.join(',');
}

/** `requester<operator><user's label value>`, a label-selector term. */
function requesterTerm(userRef: string, operator: '=' | '!=' = '='): string {
  return `${REQUESTER_LABEL}${operator}${entityRefLabelValue(userRef)}`;
}

/**
 * The product label-selector term of a key filter, and the exact re-check of every
 * condition (label values are truncated or hashed, and the phase is in the status).
 */
function keyFilterTerms(filter: KeyFilter) {
  return {
    productTerm:
      filter.productName === undefined
        ? undefined
        : `${PRODUCT_LABEL}=${productLabelValue(filter.productName)}`,
    matches: (k: KubeObject) =>
      (filter.phase === undefined || phaseOf(k) === filter.phase) &&
      (filter.productName === undefined || k.spec?.apiProductRef?.name === filter.productName) &&
      (filter.requestedBy === undefined || k.spec?.requestedBy?.userId === filter.requestedBy),
  };
}
