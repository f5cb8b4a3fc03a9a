/*
 * The portal's business rules, independent of HTTP and of permissions:
 * - products: the HTTPRoute they target must exist; the owner annotation is the caller or
 *   one of the caller's groups; an MCP product's server must be in the catalog, its owner
 *   is the server's owner, and it carries its own plans (mcp/mcpProductRules.ts); PATCH is a JSON merge patch guarded by resourceVersion
 *   (compare-and-set in the store, so concurrent edits never get lost);
 * - key requests: the product must exist, be Published and offer the tier; automatic
 *   approval mode approves at once;
 * - reviews, single and bulk, and the approval itself (the secret and its labels) are
 *   delegated to KeyReviewService;
 * - `status.plans` of a product is derived from the PlanPolicies targeting its route, or
 *   for an MCP product from its `spec.plans`;
 * - an access request (a key of an MCP product) never has a secret: the reveal answers 409.
 *
 * It implements PortalService; who may call what is decided by AuthorizedPortalService,
 * which wraps it and takes part through the `check` of each call on one record (see
 * portalService.ts): this class reads the record, calls the check, then acts. A key is
 * always read with its product's owner (for a missing key: the product named like the key),
 * so a key the check hides costs what a missing key costs. Atomic state changes
 * (Pending → Approved/Rejected, one-time reveal) are the store's job.
 *
 * After each stored change the service publishes its event (PortalEventPublisher) and
 * sends its notifications (PortalNotifier); both are best effort and never fail a call.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
} from '@backstage/errors';
import {
  type ApiKey,
  type ApiProduct,
  type ApiProductSpec,
  AUTOMATIC_APPROVAL_REVIEWER,
  type BulkReviewResult,
  type McpGrant,
  type McpGrantListQuery,
  describeMcpTarget,
  isMcpTarget,
  type McpTarget,
  type ObjectRef,
  OWNER_ANNOTATION,
  ownerRefsOfQuery,
  type ReadOnlyObject,
} from '@devportal/plugin-portal-common';
import {
  assertPlansFitTarget,
  assertTargetKept,
  ownerOfMcpProduct,
  plansOfMcpProduct,
} from '../mcp/mcpProductRules';
import { removedPlanTiers } from '../mcp/removedPlanTiers';
import type { McpTargetDirectory, McpTargetEntry } from '../mcp/McpTargetDirectory';
import { plansOfPolicies } from '../resources/plansForRoute';
import type {
  KeyFilter,
  Page,
  PageRequest,
  PortalStore,
  ReadOnlyKind,
  ReadOnlyResourceSource,
  StoredApiProduct,
} from '../store/types';
import { checkedKey } from './checkedKey';
import { KeyReviewService } from './KeyReviewService';
import { McpGrantReader } from './McpGrantReader';
import { PortalActors } from './PortalActors';
import { PortalEventPublisher } from './PortalEventPublisher';
import { PortalNotifier } from './PortalNotifier';
import type {
  KeyCheck,
  McpTargetCheck,
  PortalService,
  ProductCheck,
  ProductQuery,
} from './portalService';
import { applyMergePatch, normalizeEntityRef } from './productPatch';
import { describeRef, productNotFound, productOwnerOf, productRefOfKey, refOfKey } from './records';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  PortalActor,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';

/** Options of {@link DefaultPortalService.create}. */
export interface DefaultPortalServiceOptions {
  store: PortalStore;
  resources: ReadOnlyResourceSource;
  /** Who the caller is (share one with AuthorizedPortalService: one look-up a request). */
  actors: PortalActors;
  /** Publishes every state change; default: nothing is published. */
  events?: PortalEventPublisher;
  /** Notifies owners and requesters; default: nobody is notified. */
  notifier?: PortalNotifier;
  /** Where MCP products' targets are looked up (the catalog); without it, none can be made. */
  mcpTargets?: McpTargetDirectory;
  /** The current time; injectable so tests can pin it. */
  now?: () => Date;
}

/** Lets every record through: what a call without a check means. */
const noCheck = async () => {};

/** The portal's business service. See the file comment for the rules it enforces. */
export class DefaultPortalService implements PortalService {
  readonly #store: PortalStore;
  readonly #resources: ReadOnlyResourceSource;
  readonly #actors: PortalActors;
  readonly #events: PortalEventPublisher | undefined;
  readonly #notifier: PortalNotifier | undefined;
  readonly #now: () => Date;
  readonly #reviews: KeyReviewService;
  readonly #mcpTargets: McpTargetDirectory | undefined;
  readonly #grants: McpGrantReader;

  static create(options: DefaultPortalServiceOptions): DefaultPortalService {
    return new DefaultPortalService(options);
  }

  private constructor(options: DefaultPortalServiceOptions) {
    this.#store = options.store;
    this.#resources = options.resources;
    this.#actors = options.actors;
    this.#events = options.events;
    this.#notifier = options.notifier;
    this.#now = options.now ?? (() => new Date());
    this.#mcpTargets = options.mcpTargets;
    this.#reviews = KeyReviewService.create(options);
    this.#grants = new McpGrantReader(this.#store, this.#now);
  }

  // --- API products --------------------------------------------------------------------

  async listProducts(
    _credentials: BackstageCredentials,
    query: ProductQuery,
    page?: PageRequest,
  ): Promise<Page<ApiProduct>> {
    const ownerRefs = narrowedRefs(query.ownerRefs, ownerRefsOfQuery(query.owner));
    if (ownerRefs?.length === 0) return { items: [] };
    const filter = {
      namespace: query.namespace,
      ownerRefs,
      targetKind: query.targetKind,
      targetName: query.targetName,
    };
    const { items, cursor } =
      page === undefined
        ? { items: await this.#store.listProducts(filter), cursor: undefined }
        : await this.#store.listProductsPage(filter, page);
    const policies = await this.#resources.list('PlanPolicy', {
      namespace: filter.namespace,
    });
    const products = items.map(product => withPlans(product, policies));
    return cursor === undefined ? { items: products } : { items: products, cursor };
  }

  async getProduct(
    _credentials: BackstageCredentials,
    ref: ObjectRef,
    check: ProductCheck = noCheck,
  ): Promise<ApiProduct> {
    return this.#withPlans(await this.#checkedProduct(ref, check));
  }

  async createProduct(
    credentials: BackstageCredentials,
    request: CreateApiProductRequest,
    check: McpTargetCheck = () => {},
  ): Promise<ApiProduct> {
    const actor = await this.#actors.requireUser(credentials, 'creating an API product');
    const { metadata, spec } = request;
    assertPlansFitTarget(spec);
    const requestedOwner = metadata.annotations?.[OWNER_ANNOTATION];
    let owner: string;
    if (isMcpTarget(spec.targetRef)) {
      const target = await this.#mcpTarget(spec.targetRef, name => {
        throw new InputError(
          `spec.targetRef: no ${name} in the catalog (the broker publishes its servers there within seconds of adding them)`,
        );
      });
      check(spec.targetRef, target.owner);
      owner = ownerOfMcpProduct(
        spec.targetRef,
        target.owner,
        requestedOwner === undefined
          ? undefined
          : normalizeEntityRef(requestedOwner, `metadata.annotations["${OWNER_ANNOTATION}"]`),
      );
    } else {
      owner = this.#ownerForCreate(actor, requestedOwner);
      await this.#assertRouteExists(metadata.namespace, spec.targetRef.name);
    }
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
    await this.#events?.productChanged('apiproduct.created', created, actor.userRef);
    return this.#withPlans(created);
  }

  /** A merge patch, written as a compare-and-set on its (or the read) `resourceVersion`. */
  async updateProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    patch: ApiProductPatch,
    check: ProductCheck = noCheck,
  ): Promise<ApiProduct> {
    const actor = await this.#actors.requireUser(credentials, 'updating an API product');
    const current = await this.#checkedProduct(ref, check);
    const expectedVersion = patch.metadata?.resourceVersion;
    if (expectedVersion !== undefined && expectedVersion !== current.metadata.resourceVersion) {
      throw new ConflictError(
        `APIProduct ${describeRef(current.metadata)} has resourceVersion ${current.metadata.resourceVersion}, not ${expectedVersion}; read it again and retry`,
      );
    }

    const spec = applyMergePatch(current.spec, patch.spec ?? {}) as ApiProductSpec;
    spec.approvalMode = spec.approvalMode ?? 'manual';
    spec.publishStatus = spec.publishStatus ?? 'Draft';
    assertTargetKept(current.spec, spec);
    assertPlansFitTarget(spec);
    if (!isMcpTarget(spec.targetRef) && spec.targetRef.name !== current.spec.targetRef.name) {
      await this.#assertRouteExists(current.metadata.namespace, spec.targetRef.name);
    }
    const labels = applyMergePatch(current.metadata.labels ?? {}, patch.metadata?.labels ?? {}) as
      Record<string, string> | undefined;
    const annotations = { ...current.metadata.annotations };
    const newOwner = patch.metadata?.annotations?.[OWNER_ANNOTATION];
    if (newOwner !== undefined) {
      annotations[OWNER_ANNOTATION] = normalizeEntityRef(newOwner, 'owner');
    }

    // The store refuses dropping a tier live grants use, atomically with the write.
    const replaced = await this.#store.replaceProduct(
      {
        ...current,
        metadata: { ...current.metadata, labels: labels ?? {}, annotations },
        spec,
      },
      { tiers: removedPlanTiers(current.spec, spec), now: this.#now() },
    );
    await this.#events?.productChanged('apiproduct.updated', replaced, actor.userRef);
    return this.#withPlans(replaced);
  }

  /** Deletes a product and its keys (no `apikey.deleted` event for those: the product's). */
  async deleteProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    check: ProductCheck = noCheck,
  ): Promise<void> {
    const actor = await this.#actors.requireUser(credentials, 'deleting an API product');
    const product = await this.#checkedProduct(ref, check);
    await this.#store.deleteProduct(ref);
    await this.#events?.productChanged('apiproduct.deleted', product, actor.userRef);
  }

  // --- read-only kinds ------------------------------------------------------------------

  async listReadOnly(
    _credentials: BackstageCredentials,
    kind: ReadOnlyKind,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ReadOnlyObject>> {
    const { namespace } = query;
    return page === undefined
      ? { items: await this.#resources.list(kind, { namespace }) }
      : this.#resources.listPage(kind, { namespace }, page);
  }

  async getPlanPolicy(_credentials: BackstageCredentials, ref: ObjectRef): Promise<ReadOnlyObject> {
    const object = await this.#resources.get('PlanPolicy', ref);
    if (!object) {
      throw new NotFoundError(`PlanPolicy ${describeRef(ref)} not found`);
    }
    return object;
  }

  // --- API key requests ----------------------------------------------------------------

  async listRequests(
    _credentials: BackstageCredentials,
    query: RequestQuery,
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    return this.#keysPage(
      {
        namespace: query.namespace,
        phase: query.status,
        ...(query.product !== undefined && { productName: query.product }),
        ...(query.requester !== undefined && { requestedBy: query.requester }),
        ...(query.owner !== undefined && { productOwnerRefs: ownerRefsOfQuery(query.owner) }),
        ...(query.ownedBy !== undefined && { ownedBy: query.ownedBy }),
      },
      page,
    );
  }

  async listMyRequests(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    const actor = await this.#actors.requireUser(credentials, 'listing your own requests');
    return this.#keysPage({ namespace: query.namespace, requestedBy: actor.userRef }, page);
  }

  async createRequest(
    credentials: BackstageCredentials,
    request: CreateApiKeyRequest,
    check: ProductCheck = noCheck,
  ): Promise<ApiKey> {
    const actor = await this.#actors.requireUser(credentials, 'requesting an API key');
    const ref = request.apiProductRef;
    const found = await this.#store.getProduct(ref);
    const product = found && (await this.#withPlans(found));
    await check(product, ref);
    if (!product) throw productNotFound(ref);

    const productRef = describeRef(product.metadata);
    if (product.spec.publishStatus !== 'Published') {
      throw new ConflictError(
        `APIProduct ${productRef} is ${product.spec.publishStatus}; keys can be requested for Published products only`,
      );
    }
    assertTierOffered(product, request.planTier);
    this.#assertFuture(request.expiresAt);
    if (isMcpTarget(product.spec.targetRef)) {
      await this.#mcpTarget(product.spec.targetRef, name => {
        throw new ConflictError(`${name} does not exist (any more); ask the product's owners`);
      });
    }

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
      ...(automatic && { approval: await this.#reviews.automaticApproval(product) }),
    });
    await this.#events?.keyChanged('apikey.requested', created, actor.userRef, product);
    if (automatic) {
      // Approved at once: the requester sees it in the answer, the owners need not act.
      await this.#events?.keyChanged(
        'apikey.approved',
        created,
        AUTOMATIC_APPROVAL_REVIEWER,
        product,
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
  async updateRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    update: UpdateApiKeyRequest,
    check: KeyCheck = noCheck,
  ): Promise<ApiKey> {
    await this.#actors.requireUser(credentials, 'editing an API key request');
    const key = await checkedKey(this.#store, ref, check);
    if (key.status?.phase !== 'Pending') {
      throw new ConflictError(
        `APIKey ${describeRef(key.metadata)} is ${key.status?.phase}; only Pending requests can be edited`,
      );
    }
    if (update.planTier !== undefined) {
      const product = await this.#store.getProduct(productRefOfKey(key));
      if (product) {
        assertTierOffered(await this.#withPlans(product), update.planTier);
      }
    }
    this.#assertFuture(update.expiresAt ?? undefined);
    return this.#store.updatePendingKey(key.metadata, update);
  }

  /** Deletes a key in any phase; deleting an Approved key revokes it (its secret goes). */
  async deleteRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    reason?: string,
    check: KeyCheck = noCheck,
  ): Promise<void> {
    const actor = await this.#actors.requireUser(credentials, 'deleting an API key request');
    const key = await checkedKey(this.#store, ref, check);
    const product = await this.#store.getProduct(productRefOfKey(key));
    await this.#store.deleteKey(refOfKey(key));
    await this.#events?.keyChanged('apikey.deleted', key, actor.userRef, product);
    await this.#notifier?.keyDeleted({ key, product }, reason, actor.userRef);
  }

  /**
   * Revokes an Approved key (expired ones too): deleted with its secret, as `DELETE`, but
   * announced as `apikey.revoked`. Any other phase is a ConflictError naming it.
   */
  async revokeRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    reason?: string,
    check: KeyCheck = noCheck,
  ): Promise<void> {
    const actor = await this.#actors.requireUser(credentials, 'revoking an API key');
    const key = await checkedKey(this.#store, ref, check);
    if (key.status.phase !== 'Approved') {
      throw new ConflictError(
        `APIKey ${describeRef(key.metadata)} is ${key.status.phase}; only Approved keys can be revoked (reject or delete a request instead)`,
      );
    }
    const product = await this.#store.getProduct(productRefOfKey(key));
    await this.#store.deleteKey(refOfKey(key));
    await this.#events?.keyChanged('apikey.revoked', key, actor.userRef, product);
    await this.#notifier?.keyDeleted({ key, product }, reason, actor.userRef);
  }

  /** The key's secret, the first time only (ConflictError afterwards). */
  async revealSecret(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    check: KeyCheck = noCheck,
  ): Promise<string> {
    const actor = await this.#actors.requireUser(credentials, 'reading an API key secret');
    const key = await checkedKey(this.#store, ref, check);
    const product = await this.#store.getProduct(productRefOfKey(key));
    if (product && isMcpTarget(product.spec.targetRef)) {
      throw new ConflictError(
        `APIKey ${describeRef(key.metadata)} grants access to ${describeMcpTarget(product.spec.targetRef)}: no secret is issued; connect your MCP client to the broker and sign in as yourself`,
      );
    }
    const secret = await this.#store.revealSecret(refOfKey(key));
    await this.#events?.keyChanged('apikey.secret-revealed', key, actor.userRef, product);
    return secret;
  }

  /** Delegated to {@link McpGrantReader}. */
  async listMcpGrants(
    _credentials: BackstageCredentials,
    query: McpGrantListQuery,
    page?: PageRequest,
  ): Promise<Page<McpGrant>> {
    return this.#grants.list(query, page);
  }

  /** Delegated to {@link McpGrantReader}. */
  async getMcpGrant(_credentials: BackstageCredentials, ref: ObjectRef): Promise<McpGrant> {
    return this.#grants.get(ref);
  }

  /** Delegated to {@link KeyReviewService}. */
  async reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason?: string,
    check: KeyCheck = noCheck,
  ): Promise<ApiKey> {
    return this.#reviews.reviewRequest(credentials, ref, decision, reason, check);
  }

  /** Delegated to {@link KeyReviewService}. */
  async bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason?: string,
    check: KeyCheck = noCheck,
  ): Promise<BulkReviewResult[]> {
    return this.#reviews.bulkReview(credentials, refs, decision, reason, check);
  }

  // --- helpers --------------------------------------------------------------------------

  /** One page of keys (the whole list as one page without `page`). */
  async #keysPage(filter: KeyFilter, page?: PageRequest): Promise<Page<ApiKey>> {
    return page === undefined
      ? { items: await this.#store.listKeys(filter) }
      : this.#store.listKeysPage(filter, page);
  }

  /** The product a call acts on, after its check; 404 when it does not exist. */
  async #checkedProduct(ref: ObjectRef, check: ProductCheck): Promise<StoredApiProduct> {
    const product = await this.#store.getProduct(ref);
    await check(product, ref);
    if (!product) throw productNotFound(ref);
    return product;
  }

  #ownerForCreate(actor: PortalActor, requested: string | undefined): string {
    if (requested === undefined) {
      return normalizeEntityRef(actor.userRef, 'the caller');
    }
    const owner = normalizeEntityRef(requested, `metadata.annotations["${OWNER_ANNOTATION}"]`);
    if (!actor.ownershipRefs.some(ref => ref.toLocaleLowerCase('en-US') === owner)) {
      throw new NotAllowedError(
        `you may name only yourself or one of your groups as owner (${actor.ownershipRefs.join(', ')}), not ${owner}`,
      );
    }
    return owner;
  }

  async #assertRouteExists(namespace: string, routeName: string): Promise<void> {
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

  /** The catalog's entry of an MCP target; `missing` throws when there is none. */
  async #mcpTarget(target: McpTarget, missing: (name: string) => never): Promise<McpTargetEntry> {
    if (!this.#mcpTargets) {
      throw new ServiceUnavailableError('this portal has no catalog to look up MCP targets in');
    }
    return (await this.#mcpTargets.get(target)) ?? missing(describeMcpTarget(target));
  }

  #assertFuture(timestamp: string | undefined): void {
    if (timestamp !== undefined && Date.parse(timestamp) <= this.#now().getTime()) {
      throw new InputError(`expiresAt must be in the future, got ${timestamp}`);
    }
  }

  async #withPlans(product: StoredApiProduct): Promise<ApiProduct> {
    const policies = isMcpTarget(product.spec.targetRef)
      ? []
      : await this.#resources.list('PlanPolicy', { namespace: product.metadata.namespace });
    return withPlans(product, policies);
  }
}

function assertTierOffered(product: ApiProduct, tier: string): void {
  const tiers = product.status?.plans.map(plan => plan.tier) ?? [];
  if (tiers.length > 0 && !tiers.includes(tier)) {
    throw new InputError(
      `planTier "${tier}" is not offered by APIProduct ${describeRef(product.metadata)}; choose one of: ${tiers.join(', ')}`,
    );
  }
}

function withPlans(product: StoredApiProduct, policies: ReadOnlyObject[]): ApiProduct {
  return {
    ...product,
    kind: 'APIProduct',
    status: {
      plans: isMcpTarget(product.spec.targetRef)
        ? plansOfMcpProduct(product.spec)
        : plansOfPolicies(policies, product.metadata.namespace, product.spec.targetRef.name),
    },
  };
}

/**
 * The owner refs a product list is narrowed to: the scope's (the decorator's, for `.own`),
 * the client's `owner` filter, or the refs in both (empty: nothing can match).
 */
function narrowedRefs(
  scope: string[] | undefined,
  filter: string[] | undefined,
): string[] | undefined {
  if (scope === undefined) return filter;
  if (filter === undefined) return scope;
  return scope.filter(ref => filter.includes(ref));
}
