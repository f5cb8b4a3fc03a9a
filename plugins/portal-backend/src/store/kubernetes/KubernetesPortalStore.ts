/*
 * KubernetesPortalStore: the PortalStore on custom resources (`portal.storage:
 * kubernetes`), through @kubernetes/client-node. Mapping: customResources.ts.
 *
 * Guarantees, each from a compare-and-set on resourceVersion (a 409 from the API
 * server), never from read-check-write alone:
 * - reviewKey / updatePendingKey / revealSecret: read the key, check its phase, write
 *   with `metadata.resourceVersion` of that read; a 409 means someone else wrote first,
 *   so read again and decide again (the second read sees their phase: ConflictError).
 *   Of 50 concurrent reveals exactly one write lands; only that caller returns the key.
 * - An approval creates the key's Secret first and then flips the status (pointing it
 *   at the Secret); a loser deletes its unused Secret. So an Approved key always has
 *   its Secret, and the stored secret is the winner's.
 * - The reveal reads the Secret before its compare-and-set, so a failed read leaves the
 *   key unrevealed instead of burning the secret; the value is returned only by the
 *   caller whose write landed.
 * - replaceProduct: PUT with the given resourceVersion (checked first against the
 *   current one, so an odd version string is a ConflictError, not a validation error).
 * - Duplicate Pending requests: a claim object per (requester, product, tier), see
 *   pendingClaims.ts.
 * - createKey vs deleteProduct: the delete first marks the product (annotation), then
 *   deletes its keys, then the product (uid precondition). createKey re-reads the
 *   product after creating the key and removes the key again if the product is marked
 *   or gone, so no key outlives its product. A delete that fails part-way leaves the
 *   product marked; a retry completes it, and no key can be added meanwhile.
 * - Keys carry an ownerReference to their product and Secrets one to their key, so a
 *   cluster's garbage collector also cleans up after deletes done with kubectl. The
 *   store does not rely on it: it deletes Secrets itself (revocation must be now).
 *
 * Lists use label selectors (owner, requester, product labels written by the store;
 * entity refs hashed because they are not valid label values), then re-check the exact
 * refs on the few objects selected. The phase filter is applied to the selected keys
 * in memory: the phase lives in the status subresource, which cannot update a label in
 * the same write. With `portal.kubernetes.namespaces`, lists are per namespace and
 * other namespaces do not exist for the portal.
 *
 * Failure modes: every API error is mapped once, in kubernetesErrors.ts (404, 409,
 * 400/422, 401/403 → logged 503, 429/5xx/timeouts → 503). Nothing here logs record
 * contents, and never a secret.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError, isError } from '@backstage/errors';
import { OWNER_ANNOTATION, type ApiKey, type ObjectRef } from '@devportal/plugin-portal-common';
import { generateKeyName } from '../generateKeyName';
import type {
  KeyApproval,
  KeyFilter,
  KeyReview,
  NewApiKey,
  NewApiProduct,
  Page,
  PageRequest,
  PendingKeyUpdate,
  PortalStore,
  ProductFilter,
  StoredApiProduct,
} from '../types';
import {
  API_KEYS,
  API_KEY_SECRET_FIELD,
  API_PRODUCTS,
  keyFromObject,
  keySpec,
  nowTimestamp,
  ownerReferenceTo,
  phaseOf,
  productFromObject,
  type StoredKeyStatus,
} from './customResources';
import {
  createKubernetesApi,
  type KubeObject,
  type KubernetesApi,
  type NamespaceScope,
} from './kubernetesClient';
import type { KubernetesStoreConfig } from './kubernetesConfig';
import { AlreadyExistsError } from './AlreadyExistsError';
import { namespaceSegments, pageSegments, type ListSegment } from './kubernetesPaging';
import {
  DELETING_ANNOTATION,
  KEY_UID_LABEL,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  OWNER_LABEL,
  PRODUCT_LABEL,
  REQUESTER_LABEL,
  assertNoReservedKeys,
  entityRefLabelValue,
  inSelector,
  productLabelValue,
  reservedKeysOf,
  withoutReservedKeys,
} from './labels';
import { acquirePendingClaim } from './pendingClaims';
import { ownerOf, refText } from '../productOwner';

/** Attempts at a fresh generated key name when one is taken (odds ~1e-11 each). */
const KEY_NAME_ATTEMPTS = 5;
/**
 * Compare-and-set rounds before answering ConflictError. Each lost round means another
 * writer's change landed; after it the phase check usually decides (e.g. "already
 * revealed"), so more than a few rounds only happen under unrelated heavy churn.
 */
const MAX_CAS_ATTEMPTS = 20;
/** Secret annotations Kuadrant's PlanPolicy and audit tooling read. */
const PLAN_ID_ANNOTATION = 'secret.kuadrant.io/plan-id';
const USER_ID_ANNOTATION = 'secret.kuadrant.io/user-id';

/** Options of {@link KubernetesPortalStore.create}. */
export interface KubernetesPortalStoreOptions {
  config: KubernetesStoreConfig;
  logger: LoggerService;
}

function keyNotFound(ref: ObjectRef): NotFoundError {
  return new NotFoundError(`API key ${refText(ref)} not found`);
}

function byNamespaceAndName(a: { metadata: ObjectRef }, b: { metadata: ObjectRef }): number {
  return (
    a.metadata.namespace.localeCompare(b.metadata.namespace) ||
    a.metadata.name.localeCompare(b.metadata.name)
  );
}

function selector(...terms: Array<string | undefined>): string | undefined {
  const defined = terms.filter((t): t is string => t !== undefined);
  return defined.length === 0 ? undefined : defined.join(',');
}

function isMarkedForDeletion(product: KubeObject): boolean {
  return (
    product.metadata.annotations?.[DELETING_ANNOTATION] !== undefined ||
    product.metadata.deletionTimestamp !== undefined
  );
}

function isNamed(name: string) {
  return (error: unknown) => isError(error) && error.name === name;
}
const isConflict = isNamed('ConflictError');
const isNotFound = isNamed('NotFoundError');

/**
 * Classifies the failure of a key's compare-and-set write: returns when another writer won
 * (409: read again and retry), throws otherwise (404: the key was deleted meanwhile).
 */
function rethrowUnlessLostRace(ref: ObjectRef, error: unknown): void {
  if (isNotFound(error)) {
    throw keyNotFound(ref);
  }
  if (!isConflict(error)) {
    throw error;
  }
}

/**
 * The {@link PortalStore} on Kubernetes custom resources. See the comment at the top of
 * this file for the mapping and its guarantees.
 */
export class KubernetesPortalStore implements PortalStore {
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
    private readonly api: KubernetesApi,
    private readonly servedNamespaces: string[] | undefined,
    private readonly logger: LoggerService,
  ) {}

  // --- namespaces -------------------------------------------------------------------

  private isServed(namespace: string): boolean {
    return this.servedNamespaces === undefined || this.servedNamespaces.includes(namespace);
  }

  /** The namespaces a list covers; `[]` when the requested one is not served. */
  private scope(namespace: string | undefined): NamespaceScope {
    if (namespace === undefined) {
      return this.servedNamespaces;
    }
    return this.isServed(namespace) ? [namespace] : [];
  }

  private assertServed(namespace: string): void {
    if (!this.isServed(namespace)) {
      throw new InputError(
        `Namespace ${namespace} is not served by this portal (portal.kubernetes.namespaces: ${this.servedNamespaces!.join(', ')})`,
      );
    }
  }

  private async readKeyObject(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.isServed(ref.namespace)
      ? this.api.getCustom(API_KEYS, ref.namespace, ref.name)
      : undefined;
  }

  /** The APIKey object; NotFoundError when it does not exist or its namespace is not served. */
  private async requireKeyObject(ref: ObjectRef): Promise<KubeObject> {
    const object = await this.readKeyObject(ref);
    if (object === undefined) throw keyNotFound(ref);
    return object;
  }

  private async readProductObject(ref: ObjectRef): Promise<KubeObject | undefined> {
    return this.isServed(ref.namespace)
      ? this.api.getCustom(API_PRODUCTS, ref.namespace, ref.name)
      : undefined;
  }

  // --- products ---------------------------------------------------------------------

  async createProduct(product: NewApiProduct): Promise<StoredApiProduct> {
    this.assertServed(product.namespace);
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
          labels: { ...product.labels, [OWNER_LABEL]: entityRefLabelValue(owner) },
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

  async getProduct(ref: ObjectRef): Promise<StoredApiProduct | undefined> {
    const object = await this.readProductObject(ref);
    return object === undefined ? undefined : productFromObject(object);
  }

  async listProducts(filter: ProductFilter): Promise<StoredApiProduct[]> {
    const products = await this.listProductObjects(filter.namespace, filter.ownerRefs);
    return products.map(productFromObject).sort(byNamespaceAndName);
  }

  async listProductsPage(
    filter: ProductFilter,
    page: PageRequest,
  ): Promise<Page<StoredApiProduct>> {
    const { ownerRefs } = filter;
    const namespaces = this.scope(filter.namespace);
    if (ownerRefs?.length === 0 || namespaces?.length === 0) {
      return { items: [] };
    }
    const labelSelector =
      ownerRefs === undefined
        ? undefined
        : inSelector(OWNER_LABEL, ownerRefs.map(entityRefLabelValue));
    const { items, cursor } = await pageSegments(
      namespaceSegments(namespaces, labelSelector),
      options => this.api.listCustomChunk(API_PRODUCTS, options),
      o =>
        ownerRefs === undefined ||
        ownerRefs.includes(o.metadata.annotations?.[OWNER_ANNOTATION] ?? ''),
      page,
    );
    return { items: items.map(productFromObject), cursor };
  }

  /** Products by owner-label selector, re-checked against the exact owner annotation. */
  private async listProductObjects(
    namespace: string | undefined,
    ownerRefs: string[] | undefined,
  ): Promise<KubeObject[]> {
    const namespaces = this.scope(namespace);
    if (ownerRefs?.length === 0 || namespaces?.length === 0) {
      return [];
    }
    const objects = await this.api.listCustom(API_PRODUCTS, {
      namespaces,
      labelSelector:
        ownerRefs === undefined
          ? undefined
          : inSelector(OWNER_LABEL, ownerRefs.map(entityRefLabelValue)),
    });
    return ownerRefs === undefined
      ? objects
      : objects.filter(o => ownerRefs.includes(o.metadata.annotations?.[OWNER_ANNOTATION] ?? ''));
  }

  async replaceProduct(product: StoredApiProduct): Promise<StoredApiProduct> {
    const { namespace, name, resourceVersion } = product.metadata;
    const ref = { namespace, name };
    assertNoReservedKeys('labels', product.metadata.labels);
    assertNoReservedKeys('annotations', product.metadata.annotations);
    const owner = ownerOf(product.metadata.annotations);
    const current = await this.readProductObject(ref);
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
            ...reservedKeysOf(current.metadata.labels),
            [OWNER_LABEL]: entityRefLabelValue(owner),
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

  async deleteProduct(ref: ObjectRef): Promise<void> {
    const missing = () => new NotFoundError(`API product ${refText(ref)} not found`);
    const product = await this.readProductObject(ref);
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
      for (const key of await this.keysOfProduct(ref)) {
        await this.deleteKeyObject(key);
      }
      await this.api.deleteCustom(API_PRODUCTS, ref.namespace, ref.name, {
        uid: product.metadata.uid,
      });
    } catch (error) {
      throw isNotFound(error) ? missing() : error;
    }
  }

  private async keysOfProduct(ref: ObjectRef): Promise<KubeObject[]> {
    const keys = await this.api.listCustom(API_KEYS, {
      namespaces: [ref.namespace],
      labelSelector: `${PRODUCT_LABEL}=${productLabelValue(ref.name)}`,
    });
    return keys.filter(k => k.spec?.apiProductRef?.name === ref.name);
  }

  // --- keys -------------------------------------------------------------------------

  async createKey(key: NewApiKey): Promise<ApiKey> {
    const productName = key.spec.apiProductRef.name;
    const productRef = { namespace: key.namespace, name: productName };
    const missingProduct = () => new NotFoundError(`API product ${refText(productRef)} not found`);
    const product = await this.readProductObject(productRef);
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
      const productNow = await this.readProductObject(productRef);
      if (
        productNow === undefined ||
        productNow.metadata.uid !== product.metadata.uid ||
        isMarkedForDeletion(productNow)
      ) {
        throw missingProduct();
      }
      if (key.approval !== undefined) {
        secretName = await this.createKeySecret(created, key.approval);
      }
    } catch (error) {
      await this.discardKey(created);
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
            secretRef: { name: secretName! },
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
        await this.discardKey(created);
        throw error;
      }
      // Someone acted on the new key first (reviewed or deleted it): report what is there.
      if (secretName !== undefined) {
        await this.discardSecret(ref.namespace, secretName);
      }
      const current = await this.readKeyObject(ref);
      if (current === undefined) {
        throw new NotFoundError(`API key ${refText(ref)} was deleted while being created`);
      }
      return keyFromObject(current);
    }
  }

  private async createKeyObject(key: NewApiKey, product: KubeObject): Promise<KubeObject> {
    const productName = key.spec.apiProductRef.name;
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
            },
            ownerReferences: [ownerReferenceTo(product, 'APIProduct')],
          },
          spec: keySpec(key.spec),
        });
      } catch (error) {
        // A taken name: draw again. Anything else is the answer.
        if (!(error instanceof AlreadyExistsError) || attempt >= KEY_NAME_ATTEMPTS) {
          throw error;
        }
      }
    }
  }

  /** Creates the immutable Secret holding a key's value; returns its generated name. */
  /**
   * Creates the Secret of an approved key: the approval's `secretLabels` (what the
   * gateway selects key Secrets by) plus the store's own labels, which win, so an
   * AuthPolicy cannot take over the store's bookkeeping labels.
   */
  private async createKeySecret(key: KubeObject, approval: KeyApproval): Promise<string> {
    const { secret, secretLabels } = approval;
    const created = await this.api.createSecret(key.metadata.namespace!, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        generateName: `${key.metadata.name}-`,
        namespace: key.metadata.namespace,
        labels: {
          ...withoutReservedKeys(secretLabels),
          [MANAGED_BY_LABEL]: MANAGED_BY,
          [KEY_UID_LABEL]: key.metadata.uid!,
          [PRODUCT_LABEL]: productLabelValue(key.spec.apiProductRef.name),
        },
        annotations: {
          [PLAN_ID_ANNOTATION]: key.spec.planTier,
          [USER_ID_ANNOTATION]: key.spec.requestedBy.userId,
        },
        ownerReferences: [{ ...ownerReferenceTo(key, 'APIKey'), controller: true }],
      },
      type: 'Opaque',
      immutable: true,
      data: { [API_KEY_SECRET_FIELD]: Buffer.from(secret, 'utf8').toString('base64') },
    });
    return created.metadata.name!;
  }

  /** Best-effort removal of a key this call created and could not finish. */
  private async discardKey(key: KubeObject): Promise<void> {
    try {
      await this.deleteKeyObject(key);
    } catch (error) {
      // The key stays, status-less (it reads as Pending); nothing secret is in it.
      this.logger.warn(
        `Could not remove the unfinished API key ${key.metadata.namespace}/${key.metadata.name}: ${
          (error as Error).message
        }`,
      );
    }
  }

  /** Best-effort removal of a Secret that lost its race (it is owned by its key anyway). */
  private async discardSecret(namespace: string, name: string): Promise<void> {
    try {
      await this.api.deleteSecret(namespace, name);
    } catch (error) {
      if (!isNotFound(error)) {
        this.logger.warn(
          `Could not remove the unused API key Secret ${namespace}/${name}: ${(error as Error).message}`,
        );
      }
    }
  }

  async getKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    const object = await this.readKeyObject(ref);
    return object === undefined ? undefined : keyFromObject(object);
  }

  async listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    if (filter.productName !== undefined && filter.namespace === undefined) {
      throw new InputError('A key filter by product name needs the namespace');
    }
    const namespaces = this.scope(filter.namespace);
    if (namespaces?.length === 0) {
      return [];
    }
    const { productTerm, matches } = keyFilterTerms(filter);

    let objects: KubeObject[];
    if (filter.ownedBy === undefined) {
      objects = await this.api.listCustom(API_KEYS, {
        namespaces,
        labelSelector: selector(
          productTerm,
          filter.requestedBy === undefined ? undefined : requesterTerm(filter.requestedBy),
        ),
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
   * One page of keys (see kubernetesPaging.ts). The ownership filter walks two disjoint
   * selector lists one after the other: the caller's own requests, then the other
   * requests for the caller's products (`requester!=` the caller).
   */
  async listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>> {
    if (filter.productName !== undefined && filter.namespace === undefined) {
      throw new InputError('A key filter by product name needs the namespace');
    }
    const namespaces = this.scope(filter.namespace);
    if (namespaces?.length === 0) {
      return { items: [] };
    }
    const { productTerm, matches } = keyFilterTerms(filter);

    let segments: ListSegment[];
    let keep = matches;
    if (filter.ownedBy === undefined) {
      segments = namespaceSegments(
        namespaces,
        selector(
          productTerm,
          filter.requestedBy === undefined ? undefined : requesterTerm(filter.requestedBy),
        ),
      );
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
    let products = await this.listProductObjects(filter.namespace, ownershipRefs);
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

  async updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey> {
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.requireKeyObject(ref);
      this.assertPhase(ref, current, 'Pending', 'edited');
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
    throw this.tooMuchChurn(ref);
  }

  async reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey> {
    const verb = review.phase === 'Approved' ? 'approved' : 'rejected';
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.requireKeyObject(ref);
      this.assertPhase(ref, current, 'Pending', verb);
      const secretName =
        review.phase === 'Approved' ? await this.createKeySecret(current, review) : undefined;
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
          await this.discardSecret(ref.namespace, secretName);
        }
        rethrowUnlessLostRace(ref, error);
      }
    }
    throw this.tooMuchChurn(ref);
  }

  async revealSecret(ref: ObjectRef): Promise<string> {
    for (let attempt = 1; attempt <= MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.requireKeyObject(ref);
      const phase = phaseOf(current);
      if (phase !== 'Approved') {
        throw new ConflictError(
          `API key ${refText(ref)} is ${phase}, not Approved: it has no secret`,
        );
      }
      const status = current.status as StoredKeyStatus;
      if (status.secretRevealed === true) {
        throw new ConflictError(`The secret of API key ${refText(ref)} was already revealed`);
      }
      const secret =
        status.secretRef === undefined
          ? undefined
          : await this.api.readSecret(ref.namespace, status.secretRef.name);
      const encoded = secret?.data?.[API_KEY_SECRET_FIELD];
      if (
        encoded === undefined ||
        secret?.metadata.labels?.[KEY_UID_LABEL] !== current.metadata.uid
      ) {
        throw new NotFoundError(`The secret of API key ${refText(ref)} is missing`);
      }
      try {
        await this.api.mergePatchCustomStatus(API_KEYS, ref.namespace, ref.name, {
          metadata: { resourceVersion: current.metadata.resourceVersion },
          status: { secretRevealed: true, secretRevealedAt: nowTimestamp() },
        });
        return Buffer.from(encoded, 'base64').toString('utf8');
      } catch (error) {
        rethrowUnlessLostRace(ref, error);
      }
    }
    throw this.tooMuchChurn(ref);
  }

  async deleteKey(ref: ObjectRef): Promise<void> {
    const current = await this.requireKeyObject(ref);
    try {
      await this.deleteKeyObject(current);
    } catch (error) {
      throw isNotFound(error) ? new NotFoundError(`API key ${refText(ref)} not found`) : error;
    }
  }

  /**
   * Deletes a key (this very object: uid precondition), then its Secrets, which revokes
   * it at once rather than whenever the garbage collector gets to them. A key already
   * gone is fine here (a retried cascade); its Secrets are still removed.
   */
  private async deleteKeyObject(key: KubeObject): Promise<void> {
    const namespace = key.metadata.namespace!;
    try {
      await this.api.deleteCustom(API_KEYS, namespace, key.metadata.name!, {
        uid: key.metadata.uid,
      });
    } catch (error) {
      if (!isNotFound(error)) {
        throw error;
      }
    }
    await this.api.deleteSecrets(namespace, `${KEY_UID_LABEL}=${key.metadata.uid}`);
  }

  private assertPhase(ref: ObjectRef, key: KubeObject, expected: string, verb: string): void {
    const phase = phaseOf(key);
    if (phase !== expected) {
      throw new ConflictError(
        `API key ${refText(ref)} is ${phase}, not ${expected}: it can no longer be ${verb}`,
      );
    }
  }

  private tooMuchChurn(ref: ObjectRef): ConflictError {
    return new ConflictError(
      `API key ${refText(ref)} kept changing while this request tried to update it; retry`,
    );
  }
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
