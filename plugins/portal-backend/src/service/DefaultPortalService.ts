/*
 * The portal's business rules, independent of HTTP and of permissions:
 * - products: the HTTPRoute they target must exist; the owner annotation is the caller or
 *   one of the caller's groups; PATCH is a JSON merge patch guarded by resourceVersion
 *   (compare-and-set in the store, so concurrent edits never get lost);
 * - key requests: the product must exist, be Published and offer the tier; automatic
 *   approval mode approves at once; approval generates the secret with a CSPRNG;
 * - `status.plans` of a product is derived from the PlanPolicies targeting its route.
 *
 * Who may call what is decided by AuthorizedPortalService, which wraps this class. Atomic
 * state changes (Pending → Approved/Rejected, one-time reveal) are the store's job.
 *
 * After each stored change the service publishes its event (PortalEventPublisher) and
 * sends its notifications (PortalNotifier); both are best effort and never fail a call.
 */
import { randomBytes } from 'node:crypto';
import { parseEntityRef, stringifyEntityRef } from '@backstage/catalog-model';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  AUTOMATIC_APPROVAL_REVIEWER,
  OWNER_ANNOTATION,
  type ApiKey,
  type ApiProduct,
  type ApiProductSpec,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { keySecretLabelsForRoute, plansOfPolicies } from '../resources';
import type { PortalApiKeyResource } from '../permissions/rules';
import type {
  KeyFilter,
  Page,
  PageRequest,
  PortalStore,
  ProductFilter,
  ReadOnlyKind,
  ReadOnlyObject,
  ReadOnlyResourceSource,
  StoredApiProduct,
} from '../store/types';
import { PortalEventPublisher } from './PortalEventPublisher';
import { PortalNotifier } from './PortalNotifier';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  PortalActor,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';

/** Size of a generated API key in random bytes (before base64url encoding). */
export const API_KEY_SECRET_BYTES = 32;

/** Options of {@link DefaultPortalService.create}. */
export interface DefaultPortalServiceOptions {
  store: PortalStore;
  resources: ReadOnlyResourceSource;
  /** Publishes every state change; default: nothing is published. */
  events?: PortalEventPublisher;
  /** Notifies owners and requesters; default: nobody is notified. */
  notifier?: PortalNotifier;
  /** The current time; injectable so tests can pin it. */
  now?: () => Date;
}

/**
 * Normalises an entity ref: default namespace filled in and lower case, as entity refs
 * are case-insensitive (`group:Payments-Team` → `group:default/payments-team`), so that
 * owners compare equal in the store's filters.
 */
export function normalizeEntityRef(ref: string, field: string): string {
  try {
    return stringifyEntityRef(parseEntityRef(ref)).toLocaleLowerCase('en-US');
  } catch (error) {
    throw new InputError(
      `${field} must be an entity ref like "group:default/payments-team": ${(error as Error).message}`,
    );
  }
}

/** The `{namespace, name}` of a key. */
function refOfKey(key: ApiKey): ObjectRef {
  return { namespace: key.metadata.namespace, name: key.metadata.name };
}

/** Formats `namespace/name` for messages. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.namespace}/${ref.name}`;
}

/** RFC 7396 JSON merge patch: objects merge recursively, `null` removes, the rest replaces. */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) {
    return patch;
  }
  const result: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) {
      delete result[key];
    } else if (value !== undefined) {
      result[key] = applyMergePatch(result[key], value);
    }
  }
  return result;
}

/** The owner of a product (its owner annotation), if any. */
export function productOwnerOf(product: {
  metadata: { annotations?: Record<string, string> };
}) {
  return product.metadata.annotations?.[OWNER_ANNOTATION];
}

/** What a product update would change that needs `update.all`. */
export interface ProductChangeSummary {
  changesOwner: boolean;
  changesTargetRef: boolean;
}

/**
 * Keys reviewed in one call (one key, or the items of a bulk call): see
 * {@link DefaultPortalService.beginReview}.
 */
export interface KeyReview {
  /**
   * Moves one Pending key (as last read by the caller) to the decision's phase and starts
   * publishing its event. `secretLabels` are used as given for an approval (a caller
   * reviewing many keys of one product computes them once); without them they are computed.
   */
  review(
    key: ApiKey,
    options?: { secretLabels?: Record<string, string> },
  ): Promise<ApiKey>;
  /**
   * Waits for the events of every key reviewed so far and sends their notifications, one
   * per requester. Never throws.
   */
  finish(): Promise<void>;
}

/** The portal's business service. See the file comment for the rules it enforces. */
export class DefaultPortalService {
  readonly #store: PortalStore;
  readonly #resources: ReadOnlyResourceSource;
  readonly #events: PortalEventPublisher | undefined;
  readonly #notifier: PortalNotifier | undefined;
  readonly #now: () => Date;

  static create(options: DefaultPortalServiceOptions): DefaultPortalService {
    return new DefaultPortalService(options);
  }

  private constructor(options: DefaultPortalServiceOptions) {
    this.#store = options.store;
    this.#resources = options.resources;
    this.#events = options.events;
    this.#notifier = options.notifier;
    this.#now = options.now ?? (() => new Date());
  }

  // --- API products --------------------------------------------------------------------

  async listProducts(filter: ProductFilter): Promise<ApiProduct[]> {
    const products = await this.#store.listProducts(filter);
    const policies = await this.#resources.list('PlanPolicy', {
      namespace: filter.namespace,
    });
    return products.map(product => withPlans(product, policies));
  }

  /** One page of products (the whole list as one page without `page`). */
  async listProductsPage(
    filter: ProductFilter,
    page?: PageRequest,
  ): Promise<Page<ApiProduct>> {
    if (page === undefined) {
      return { items: await this.listProducts(filter) };
    }
    const { items, cursor } = await this.#store.listProductsPage(filter, page);
    const policies = await this.#resources.list('PlanPolicy', {
      namespace: filter.namespace,
    });
    return { items: items.map(product => withPlans(product, policies)), cursor };
  }

  /** A product, or undefined when it does not exist. */
  async findProduct(ref: ObjectRef): Promise<ApiProduct | undefined> {
    const product = await this.#store.getProduct(ref);
    return product ? this.#withPlans(product) : undefined;
  }

  /** A product; NotFoundError when it does not exist. */
  async getProduct(ref: ObjectRef): Promise<ApiProduct> {
    const product = await this.findProduct(ref);
    if (!product) {
      throw new NotFoundError(`APIProduct ${describeRef(ref)} not found`);
    }
    return product;
  }

  async createProduct(
    actor: PortalActor,
    request: CreateApiProductRequest,
  ): Promise<ApiProduct> {
    const { metadata, spec } = request;
    const owner = this.#ownerForCreate(
      actor,
      metadata.annotations?.[OWNER_ANNOTATION],
    );
    await this.#assertRouteExists(metadata.namespace, spec.targetRef.name);
    const created = await this.#store.createProduct({
      namespace: metadata.namespace,
      name: metadata.name,
      labels: metadata.labels,
      annotations: { ...metadata.annotations, [OWNER_ANNOTATION]: owner },
      spec: {
        ...spec,
        approvalMode: spec.approvalMode ?? 'manual',
        publishStatus: spec.publishStatus ?? 'Draft',
      },
    });
    await this.#events?.productChanged(
      'apiproduct.created',
      created.metadata,
      actor.userRef,
    );
    return this.#withPlans(created);
  }

  /** What applying `patch` to `current` would change among the guarded fields. */
  summarizeProductPatch(
    current: StoredApiProduct,
    patch: ApiProductPatch,
  ): ProductChangeSummary {
    const newOwner = patch.metadata?.annotations?.[OWNER_ANNOTATION];
    const currentOwner = productOwnerOf(current);
    const changesOwner =
      newOwner !== undefined &&
      normalizeEntityRef(
        newOwner,
        `metadata.annotations["${OWNER_ANNOTATION}"]`,
      ) !==
        (currentOwner === undefined
          ? undefined
          : normalizeEntityRef(currentOwner, 'owner'));
    const newTarget = patch.spec?.targetRef;
    const changesTargetRef =
      newTarget !== undefined &&
      newTarget !== null &&
      newTarget.name !== current.spec.targetRef.name;
    return { changesOwner, changesTargetRef };
  }

  /**
   * Applies a merge patch to `current`. `allowOwnerAndRouteChange` is false unless the
   * caller holds `update.all`; changing the owner or the route then throws NotAllowedError.
   * The write is a compare-and-set on the patch's `resourceVersion` (or the one read).
   */
  async updateProduct(
    actor: PortalActor,
    current: StoredApiProduct,
    patch: ApiProductPatch,
    options: { allowOwnerAndRouteChange: boolean },
  ): Promise<ApiProduct> {
    const { changesOwner, changesTargetRef } = this.summarizeProductPatch(
      current,
      patch,
    );
    if (
      !options.allowOwnerAndRouteChange &&
      (changesOwner || changesTargetRef)
    ) {
      throw new NotAllowedError(
        `changing ${changesOwner ? 'the owner annotation' : 'spec.targetRef'} needs portal.apiproduct.update.all`,
      );
    }
    const expectedVersion = patch.metadata?.resourceVersion;
    if (
      expectedVersion !== undefined &&
      expectedVersion !== current.metadata.resourceVersion
    ) {
      throw new ConflictError(
        `APIProduct ${describeRef(current.metadata)} has resourceVersion ${current.metadata.resourceVersion}, not ${expectedVersion}; read it again and retry`,
      );
    }

    const spec = applyMergePatch(
      current.spec,
      patch.spec ?? {},
    ) as ApiProductSpec;
    spec.approvalMode = spec.approvalMode ?? 'manual';
    spec.publishStatus = spec.publishStatus ?? 'Draft';
    if (changesTargetRef) {
      await this.#assertRouteExists(
        current.metadata.namespace,
        spec.targetRef.name,
      );
    }
    const labels = applyMergePatch(
      current.metadata.labels ?? {},
      patch.metadata?.labels ?? {},
    ) as Record<string, string> | undefined;
    const annotations = { ...current.metadata.annotations };
    const newOwner = patch.metadata?.annotations?.[OWNER_ANNOTATION];
    if (newOwner !== undefined) {
      annotations[OWNER_ANNOTATION] = normalizeEntityRef(newOwner, 'owner');
    }

    const replaced = await this.#store.replaceProduct({
      ...current,
      metadata: { ...current.metadata, labels: labels ?? {}, annotations },
      spec,
    });
    await this.#events?.productChanged(
      'apiproduct.updated',
      replaced.metadata,
      actor.userRef,
    );
    return this.#withPlans(replaced);
  }

  /** Deletes a product and its keys (no `apikey.deleted` event for those: the product's). */
  async deleteProduct(actor: PortalActor, ref: ObjectRef): Promise<void> {
    await this.#store.deleteProduct(ref);
    await this.#events?.productChanged('apiproduct.deleted', ref, actor.userRef);
  }

  // --- API key requests ----------------------------------------------------------------

  async listKeys(filter: KeyFilter): Promise<ApiKey[]> {
    return this.#store.listKeys(filter);
  }

  /** One page of keys (the whole list as one page without `page`). */
  async listKeysPage(
    filter: KeyFilter,
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    return page === undefined
      ? { items: await this.#store.listKeys(filter) }
      : this.#store.listKeysPage(filter, page);
  }

  /** A key, or undefined when it does not exist. */
  async findKey(ref: ObjectRef): Promise<ApiKey | undefined> {
    return this.#store.getKey(ref);
  }

  /** The owner of a key's product (undefined when the product is gone). */
  async productOwnerOfKey(key: ApiKey): Promise<string | undefined> {
    return this.findProductOwner({
      namespace: key.metadata.namespace,
      name: key.spec.apiProductRef.name,
    });
  }

  /** The owner of a product (undefined when it does not exist): one store read. */
  async findProductOwner(ref: ObjectRef): Promise<string | undefined> {
    const product = await this.#store.getProduct(ref);
    return product ? productOwnerOf(product) : undefined;
  }

  /**
   * A key as the permission framework sees it, by its `namespace/name` resource ref;
   * undefined for a malformed ref or a missing key.
   */
  async apiKeyResource(
    resourceRef: string,
  ): Promise<PortalApiKeyResource | undefined> {
    const [namespace, name, ...rest] = resourceRef.split('/');
    if (!namespace || !name || rest.length > 0) {
      return undefined;
    }
    const apiKey = await this.findKey({ namespace, name });
    return apiKey
      ? { apiKey, productOwnerRef: await this.productOwnerOfKey(apiKey) }
      : undefined;
  }

  async createKey(
    actor: PortalActor,
    request: CreateApiKeyRequest,
    product: ApiProduct,
  ): Promise<ApiKey> {
    const productRef = describeRef(product.metadata);
    if (product.spec.publishStatus !== 'Published') {
      throw new ConflictError(
        `APIProduct ${productRef} is ${product.spec.publishStatus}; keys can be requested for Published products only`,
      );
    }
    assertTierOffered(product, request.planTier);
    this.#assertFuture(request.expiresAt);

    const automatic = product.spec.approvalMode === 'automatic';
    const created = await this.#store.createKey({
      namespace: product.metadata.namespace,
      spec: {
        apiProductRef: { name: product.metadata.name },
        planTier: request.planTier,
        ...(request.useCase !== undefined && { useCase: request.useCase }),
        requestedBy: {
          userId: actor.userRef,
          ...(request.email !== undefined && { email: request.email }),
        },
        ...(request.expiresAt !== undefined && {
          expiresAt: request.expiresAt,
        }),
      },
      ...(automatic && {
        approval: {
          reviewedBy: AUTOMATIC_APPROVAL_REVIEWER,
          secret: generateApiKeySecret(),
          secretLabels: await this.#secretLabelsFor(product),
        },
      }),
    });
    await this.#events?.keyChanged('apikey.requested', created, actor.userRef);
    if (automatic) {
      // Approved at once: the requester sees it in the answer, the owners need not act.
      await this.#events?.keyChanged(
        'apikey.approved',
        created,
        AUTOMATIC_APPROVAL_REVIEWER,
      );
    } else {
      const owner = productOwnerOf(product);
      if (owner !== undefined) {
        await this.#notifier?.keyRequested(created, product, owner);
      }
    }
    return created;
  }

  /** Edits a Pending key; a new tier must be offered by the product. */
  async updateKey(key: ApiKey, update: UpdateApiKeyRequest): Promise<ApiKey> {
    if (key.status?.phase !== 'Pending') {
      throw new ConflictError(
        `APIKey ${describeRef(key.metadata)} is ${key.status?.phase}; only Pending requests can be edited`,
      );
    }
    if (update.planTier !== undefined) {
      const product = await this.findProduct({
        namespace: key.metadata.namespace,
        name: key.spec.apiProductRef.name,
      });
      if (product) {
        assertTierOffered(product, update.planTier);
      }
    }
    this.#assertFuture(update.expiresAt ?? undefined);
    return this.#store.updatePendingKey(key.metadata, update);
  }

  /**
   * Starts reviewing keys for one call. Each `review` moves a Pending key (as last read by
   * the caller) to Approved, with a new secret and the labels its product's route needs on
   * it, or to Rejected; the store decides atomically on its own read, so a stale key only
   * supplies its product reference, which never changes. `finish` then waits for the events
   * and notifies each requester once, so a bulk call does not send one notification per item.
   */
  beginReview(
    actor: PortalActor,
    decision: ReviewDecision,
    reason: string | undefined,
  ): KeyReview {
    const reviewed: ApiKey[] = [];
    // A bulk call publishes its items' events side by side (each may be a round trip to the
    // events backend) and waits for all of them in `finish`.
    const publishing: Promise<void>[] = [];
    const common = {
      reviewedBy: actor.userRef,
      ...(reason !== undefined && { reason }),
    };
    return {
      review: async (key, options = {}) => {
        const ref = refOfKey(key);
        let result: ApiKey;
        if (decision === 'approve') {
          const secretLabels =
            options.secretLabels ?? (await this.secretLabelsForKey(key));
          result = await this.#store.reviewKey(ref, {
            phase: 'Approved',
            ...common,
            secret: generateApiKeySecret(),
            ...(secretLabels && { secretLabels }),
          });
        } else {
          result = await this.#store.reviewKey(ref, { phase: 'Rejected', ...common });
        }
        reviewed.push(result);
        if (this.#events) {
          publishing.push(
            this.#events.keyChanged(
              decision === 'approve' ? 'apikey.approved' : 'apikey.rejected',
              result,
              actor.userRef,
            ),
          );
        }
        return result;
      },
      finish: async () => {
        await Promise.all(publishing.splice(0));
        const keys = reviewed.splice(0);
        await this.#notifier?.keysReviewed(keys, decision, reason, actor.userRef);
      },
    };
  }

  /** Reviews one key: {@link DefaultPortalService.beginReview} with a single item. */
  async reviewKey(
    key: ApiKey,
    actor: PortalActor,
    decision: ReviewDecision,
    reason: string | undefined,
    options: { secretLabels?: Record<string, string> } = {},
  ): Promise<ApiKey> {
    const review = this.beginReview(actor, decision, reason);
    try {
      return await review.review(key, options);
    } finally {
      await review.finish();
    }
  }

  /**
   * The labels the Secret of `key` needs once approved (those its product's route's
   * AuthPolicies select API keys by); undefined when its product is gone (the store then
   * reports the key's fate).
   */
  async secretLabelsForKey(key: ApiKey): Promise<Record<string, string> | undefined> {
    const product = await this.#store.getProduct({
      namespace: key.metadata.namespace,
      name: key.spec.apiProductRef.name,
    });
    return product && this.#secretLabelsFor(product);
  }

  /** The key's secret, the first time only (ConflictError afterwards). */
  async revealSecret(actor: PortalActor, key: ApiKey): Promise<string> {
    const secret = await this.#store.revealSecret(refOfKey(key));
    await this.#events?.keyChanged('apikey.secret-revealed', key, actor.userRef);
    return secret;
  }

  async deleteKey(actor: PortalActor, key: ApiKey): Promise<void> {
    await this.#store.deleteKey(refOfKey(key));
    await this.#events?.keyChanged('apikey.deleted', key, actor.userRef);
  }

  // --- read-only kinds ------------------------------------------------------------------

  async listResources(
    kind: ReadOnlyKind,
    namespace?: string,
  ): Promise<ReadOnlyObject[]> {
    return this.#resources.list(kind, { namespace });
  }

  /** One page of a read-only kind (the whole list as one page without `page`). */
  async listResourcesPage(
    kind: ReadOnlyKind,
    namespace: string | undefined,
    page?: PageRequest,
  ): Promise<Page<ReadOnlyObject>> {
    return page === undefined
      ? { items: await this.#resources.list(kind, { namespace }) }
      : this.#resources.listPage(kind, { namespace }, page);
  }

  async getResource(
    kind: ReadOnlyKind,
    ref: ObjectRef,
  ): Promise<ReadOnlyObject> {
    const object = await this.#resources.get(kind, ref);
    if (!object) {
      throw new NotFoundError(`${kind} ${describeRef(ref)} not found`);
    }
    return object;
  }

  // --- helpers --------------------------------------------------------------------------

  #ownerForCreate(actor: PortalActor, requested: string | undefined): string {
    if (requested === undefined) {
      return normalizeEntityRef(actor.userRef, 'the caller');
    }
    const owner = normalizeEntityRef(
      requested,
      `metadata.annotations["${OWNER_ANNOTATION}"]`,
    );
    if (
      !actor.ownershipRefs.some(ref => ref.toLocaleLowerCase('en-US') === owner)
    ) {
      throw new NotAllowedError(
        `you may name only yourself or one of your groups as owner (${actor.ownershipRefs.join(', ')}), not ${owner}`,
      );
    }
    return owner;
  }

  async #assertRouteExists(
    namespace: string,
    routeName: string,
  ): Promise<void> {
    const route = await this.#resources.get('HTTPRoute', {
      namespace,
      name: routeName,
    });
    if (!route) {
      throw new InputError(
        `spec.targetRef: HTTPRoute ${namespace}/${routeName} does not exist (the route must be in the product's namespace)`,
      );
    }
  }

  #assertFuture(timestamp: string | undefined): void {
    if (
      timestamp !== undefined &&
      Date.parse(timestamp) <= this.#now().getTime()
    ) {
      throw new InputError(`expiresAt must be in the future, got ${timestamp}`);
    }
  }

  /**
   * The labels a key Secret of `product` needs for the gateway to accept it: those the
   * AuthPolicies on the product's route select API keys by (see keySecretLabelsOfPolicies).
   */
  async #secretLabelsFor(
    product: StoredApiProduct,
  ): Promise<Record<string, string>> {
    return keySecretLabelsForRoute(
      this.#resources,
      product.metadata.namespace,
      product.spec.targetRef.name,
    );
  }

  async #withPlans(product: StoredApiProduct): Promise<ApiProduct> {
    const policies = await this.#resources.list('PlanPolicy', {
      namespace: product.metadata.namespace,
    });
    return withPlans(product, policies);
  }
}

/** A new API key: {@link API_KEY_SECRET_BYTES} bytes from the CSPRNG, base64url. */
export function generateApiKeySecret(): string {
  return randomBytes(API_KEY_SECRET_BYTES).toString('base64url');
}

function assertTierOffered(product: ApiProduct, tier: string): void {
  const tiers = product.status?.plans.map(plan => plan.tier) ?? [];
  if (tiers.length > 0 && !tiers.includes(tier)) {
    throw new InputError(
      `planTier "${tier}" is not offered by APIProduct ${describeRef(product.metadata)}; choose one of: ${tiers.join(', ')}`,
    );
  }
}

function withPlans(
  product: StoredApiProduct,
  policies: ReadOnlyObject[],
): ApiProduct {
  return {
    ...product,
    kind: 'APIProduct',
    status: {
      plans: plansOfPolicies(
        policies,
        product.metadata.namespace,
        product.spec.targetRef.name,
      ),
    },
  };
}
