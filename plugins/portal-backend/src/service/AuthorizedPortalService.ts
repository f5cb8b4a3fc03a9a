/*
 * Permission checks around DefaultPortalService (the catalog's Authorized* pattern).
 *
 * For every family the caller's `.all` and `.own` permissions are asked in ONE `authorize`
 * call: `.all` ALLOW ⇒ any record, else `.own` ALLOW ⇒ owned records only, neither ⇒ 403.
 * A record the caller may not read answers 404 (like a missing one); a record it may read
 * but not change answers 403. Lists are filtered by the store (owner filters), never in
 * memory.
 *
 * Ownership: a product is owned through its owner annotation (the user or one of its
 * groups); a key through its requester or its product's owner — except for editing,
 * deleting and revealing the secret of a key, where `.own` means the requester only.
 *
 * Approval (`portal.apikey.approve`) is a resource permission: one conditional decision
 * per request, applied to each key with the IS_PRODUCT_OWNER rule, so a bulk call decides
 * each item on its own.
 *
 * Existence never shows in timing: a 404 for a key that is missing and one for a key the
 * caller may not see take the same steps in the same order — the key read, then its
 * product read (for a missing key: the product named like the key), then, when reviewing
 * under a conditional approval, the read-scope round trip that tells 404 from 403; the
 * rest is decided in process (issue #20).
 *
 * Service principals may read (the permission framework allows them everything unless
 * their token has access restrictions); every change and the user-only routes need a
 * signed-in user (403 otherwise), since they record who did it.
 */
import type {
  BackstageCredentials,
  PermissionsService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  type BasicPermission,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import {
  portalApiKeyApprovePermission,
  portalApiKeyCreatePermission,
  portalApiKeyDeleteAllPermission,
  portalApiKeyDeleteOwnPermission,
  portalApiKeyReadAllPermission,
  portalApiKeyReadOwnPermission,
  portalApiKeyUpdateAllPermission,
  portalApiKeyUpdateOwnPermission,
  portalApiProductCreatePermission,
  portalApiProductDeleteAllPermission,
  portalApiProductDeleteOwnPermission,
  portalApiProductListPermission,
  portalApiProductReadAllPermission,
  portalApiProductReadOwnPermission,
  portalApiProductUpdateAllPermission,
  portalApiProductUpdateOwnPermission,
  portalAuthPolicyListPermission,
  portalPlanPolicyListPermission,
  portalPlanPolicyReadPermission,
  portalRateLimitPolicyListPermission,
  type ApiKey,
  type ApiProduct,
  type BulkReviewResult,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import {
  portalApiKeyRules,
  type PortalApiKeyResource,
} from '../permissions/rules';
import type { Page, PageRequest, ReadOnlyKind } from '../store/types';
import {
  DefaultPortalService,
  describeRef,
  productOwnerOf,
} from './DefaultPortalService';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  PortalActor,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';
import type { PortalService } from './PortalService';
import {
  isRequester,
  keyNotFound,
  ownsRef,
  productNotFound,
  scopeOf,
  toItemError,
  requireScope,
  type Scope,
} from './ownership';

/** The permission that guards each read-only kind's list. */
const READ_ONLY_LIST_PERMISSIONS: Record<ReadOnlyKind, BasicPermission> = {
  HTTPRoute: portalApiProductListPermission,
  PlanPolicy: portalPlanPolicyListPermission,
  AuthPolicy: portalAuthPolicyListPermission,
  RateLimitPolicy: portalRateLimitPolicyListPermission,
};

const authorizeApproval = createConditionAuthorizer<
  PortalApiKeyResource,
  unknown
>(portalApiKeyRules);

/** Options of {@link AuthorizedPortalService.create}. */
export interface AuthorizedPortalServiceOptions {
  service: DefaultPortalService;
  permissions: PermissionsService;
  userInfo: UserInfoService;
}

/** The permission decorator around {@link DefaultPortalService}. */
export class AuthorizedPortalService implements PortalService {
  readonly #service: DefaultPortalService;
  readonly #permissions: PermissionsService;
  readonly #userInfo: UserInfoService;

  static create(
    options: AuthorizedPortalServiceOptions,
  ): AuthorizedPortalService {
    return new AuthorizedPortalService(options);
  }

  private constructor(options: AuthorizedPortalServiceOptions) {
    this.#service = options.service;
    this.#permissions = options.permissions;
    this.#userInfo = options.userInfo;
  }

  // --- API products --------------------------------------------------------------------

  async listProducts(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiProduct>> {
    const [list, readAll, readOwn] = await this.#allowed(credentials, [
      portalApiProductListPermission,
      portalApiProductReadAllPermission,
      portalApiProductReadOwnPermission,
    ]);
    const scope = scopeOf(readAll, readOwn);
    if (!list || scope === 'none') {
      throw new NotAllowedError(
        'listing API products needs portal.apiproduct.list and portal.apiproduct.read',
      );
    }
    if (scope === 'all') {
      return this.#service.listProductsPage({ namespace: query.namespace }, page);
    }
    const actor = await this.#actor(credentials);
    if (!actor) return { items: [] };
    return this.#service.listProductsPage(
      { namespace: query.namespace, ownerRefs: actor.ownershipRefs },
      page,
    );
  }

  async getProduct(credentials: BackstageCredentials, ref: ObjectRef) {
    const scope = requireScope(
      await this.#scope(
        credentials,
        portalApiProductReadAllPermission,
        portalApiProductReadOwnPermission,
      ),
      'reading API products needs portal.apiproduct.read',
    );
    const product = await this.#service.findProduct(ref);
    const actor = scope === 'own' ? await this.#actor(credentials) : undefined;
    if (
      !product ||
      (scope === 'own' && !ownsRef(actor, productOwnerOf(product)))
    ) {
      throw productNotFound(ref);
    }
    return product;
  }

  async createProduct(
    credentials: BackstageCredentials,
    request: CreateApiProductRequest,
  ) {
    const actor = await this.#requireUser(
      credentials,
      'creating an API product',
    );
    const [create] = await this.#allowed(credentials, [
      portalApiProductCreatePermission,
    ]);
    if (!create) {
      throw new NotAllowedError(
        'creating API products needs portal.apiproduct.create',
      );
    }
    return this.#service.createProduct(actor, request);
  }

  async updateProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    patch: ApiProductPatch,
  ) {
    const actor = await this.#requireUser(
      credentials,
      'updating an API product',
    );
    const { product, scope } = await this.#productForChange(
      credentials,
      actor,
      ref,
      portalApiProductUpdateAllPermission,
      portalApiProductUpdateOwnPermission,
      'updating',
    );
    return this.#service.updateProduct(actor, product, patch, {
      allowOwnerAndRouteChange: scope === 'all',
    });
  }

  async deleteProduct(credentials: BackstageCredentials, ref: ObjectRef) {
    const actor = await this.#requireUser(
      credentials,
      'deleting an API product',
    );
    await this.#productForChange(
      credentials,
      actor,
      ref,
      portalApiProductDeleteAllPermission,
      portalApiProductDeleteOwnPermission,
      'deleting',
    );
    await this.#service.deleteProduct(actor, ref);
  }

  /**
   * The product a change applies to, after the checks: neither permission → 403; missing
   * or not readable → 404; readable but `.own` only and not owned → 403.
   */
  async #productForChange(
    credentials: BackstageCredentials,
    actor: PortalActor,
    ref: ObjectRef,
    allPermission: BasicPermission,
    ownPermission: BasicPermission,
    verb: string,
  ) {
    // read.own adds nothing here: a product the caller owns is changeable, so visible.
    const [changeAll, changeOwn, readAll] = await this.#allowed(credentials, [
      allPermission,
      ownPermission,
      portalApiProductReadAllPermission,
    ]);
    const scope = requireScope(
      scopeOf(changeAll, changeOwn),
      `${verb} API products needs ${ownPermission.name} or ${allPermission.name}`,
    );
    const product = await this.#service.findProduct(ref);
    if (!product) throw productNotFound(ref);
    const owned = ownsRef(actor, productOwnerOf(product));
    if (scope === 'own' && !owned) {
      if (readAll) {
        throw new NotAllowedError(
          `${verb} APIProduct ${describeRef(ref)} needs ${allPermission.name}: you do not own it`,
        );
      }
      throw productNotFound(ref);
    }
    return { product, scope };
  }

  // --- read-only kinds ------------------------------------------------------------------

  async listReadOnly(
    credentials: BackstageCredentials,
    kind: ReadOnlyKind,
    query: { namespace?: string },
    page?: PageRequest,
  ) {
    const permission = READ_ONLY_LIST_PERMISSIONS[kind];
    const [allowed] = await this.#allowed(credentials, [permission]);
    if (!allowed) {
      throw new NotAllowedError(`listing ${kind}s needs ${permission.name}`);
    }
    return this.#service.listResourcesPage(kind, query.namespace, page);
  }

  async getPlanPolicy(credentials: BackstageCredentials, ref: ObjectRef) {
    const [allowed] = await this.#allowed(credentials, [
      portalPlanPolicyReadPermission,
    ]);
    if (!allowed) {
      throw new NotAllowedError(
        `reading PlanPolicies needs ${portalPlanPolicyReadPermission.name}`,
      );
    }
    return this.#service.getResource('PlanPolicy', ref);
  }

  // --- API key requests ----------------------------------------------------------------

  async listRequests(
    credentials: BackstageCredentials,
    query: RequestQuery,
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    const scope = requireScope(
      await this.#scope(
        credentials,
        portalApiKeyReadAllPermission,
        portalApiKeyReadOwnPermission,
      ),
      'listing API key requests needs portal.apikey.read.own or portal.apikey.read.all',
    );
    const filter = { namespace: query.namespace, phase: query.status };
    if (scope === 'all') {
      return this.#service.listKeysPage(filter, page);
    }
    const actor = await this.#actor(credentials);
    if (!actor) return { items: [] };
    return this.#service.listKeysPage(
      {
        ...filter,
        ownedBy: { userRef: actor.userRef, ownershipRefs: actor.ownershipRefs },
      },
      page,
    );
  }

  async listMyRequests(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    const actor = await this.#requireUser(
      credentials,
      'listing your own requests',
    );
    requireScope(
      await this.#scope(
        credentials,
        portalApiKeyReadAllPermission,
        portalApiKeyReadOwnPermission,
      ),
      'listing your API key requests needs portal.apikey.read.own',
    );
    return this.#service.listKeysPage(
      { namespace: query.namespace, requestedBy: actor.userRef },
      page,
    );
  }

  async createRequest(
    credentials: BackstageCredentials,
    request: CreateApiKeyRequest,
  ) {
    const actor = await this.#requireUser(credentials, 'requesting an API key');
    const [create, readAll, readOwn] = await this.#allowed(credentials, [
      portalApiKeyCreatePermission,
      portalApiProductReadAllPermission,
      portalApiProductReadOwnPermission,
    ]);
    if (!create) {
      throw new NotAllowedError(
        'requesting API keys needs portal.apikey.create',
      );
    }
    const ref = request.apiProductRef;
    const product = await this.#service.findProduct(ref);
    const visible =
      product !== undefined &&
      (readAll || (readOwn && ownsRef(actor, productOwnerOf(product))));
    if (!visible) {
      throw productNotFound(ref);
    }
    return this.#service.createKey(actor, request, product);
  }

  async updateRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    update: UpdateApiKeyRequest,
  ) {
    const actor = await this.#requireUser(
      credentials,
      'editing an API key request',
    );
    const key = await this.#keyForRequesterChange(
      credentials,
      actor,
      ref,
      portalApiKeyUpdateAllPermission,
      portalApiKeyUpdateOwnPermission,
      'editing',
    );
    return this.#service.updateKey(key, update);
  }

  async deleteRequest(credentials: BackstageCredentials, ref: ObjectRef) {
    const actor = await this.#requireUser(
      credentials,
      'deleting an API key request',
    );
    const key = await this.#keyForRequesterChange(
      credentials,
      actor,
      ref,
      portalApiKeyDeleteAllPermission,
      portalApiKeyDeleteOwnPermission,
      'deleting',
    );
    await this.#service.deleteKey(actor, key);
  }

  async revealSecret(credentials: BackstageCredentials, ref: ObjectRef) {
    const actor = await this.#requireUser(
      credentials,
      'reading an API key secret',
    );
    const key = await this.#keyForRequesterChange(
      credentials,
      actor,
      ref,
      portalApiKeyReadAllPermission,
      portalApiKeyReadOwnPermission,
      'reading the secret of',
    );
    return this.#service.revealSecret(actor, key);
  }

  /**
   * A key for an action where `.own` means the requester only (edit, delete, secret):
   * neither permission → 403; missing or not readable → 404; readable (e.g. as product
   * owner) but not the requester → 403.
   */
  async #keyForRequesterChange(
    credentials: BackstageCredentials,
    actor: PortalActor,
    ref: ObjectRef,
    allPermission: BasicPermission,
    ownPermission: BasicPermission,
    verb: string,
  ): Promise<ApiKey> {
    const permissions =
      allPermission === portalApiKeyReadAllPermission
        ? [allPermission, ownPermission]
        : [
            allPermission,
            ownPermission,
            portalApiKeyReadAllPermission,
            portalApiKeyReadOwnPermission,
          ];
    const [all, own, readAll = all, readOwn = own] = await this.#allowed(
      credentials,
      permissions,
    );
    const scope = requireScope(
      scopeOf(all, own),
      `${verb} API key requests needs ${ownPermission.name} or ${allPermission.name}`,
    );
    const { key, productOwnerRef } = await this.#keyAndProductOwner(ref);
    if (!key) throw keyNotFound(ref);
    if (scope === 'all' || isRequester(actor, key)) {
      return key;
    }
    const readable = readAll || (readOwn && ownsRef(actor, productOwnerRef));
    if (readable) {
      throw new NotAllowedError(
        `${verb} APIKey ${describeRef(ref)} is for its requester only (or needs ${allPermission.name})`,
      );
    }
    throw keyNotFound(ref);
  }

  async reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason?: string,
  ) {
    const review = await this.#startReview(credentials, decision, reason);
    try {
      return await review.review(ref);
    } finally {
      await review.finish();
    }
  }

  async bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason?: string,
  ): Promise<BulkReviewResult[]> {
    const review = await this.#startReview(credentials, decision, reason);
    const results: BulkReviewResult[] = [];
    // One item after the other: each is an independent compare-and-set in the store, and
    // the answer must list them in input order.
    for (const ref of refs) {
      const item = { namespace: ref.namespace, name: ref.name };
      try {
        results.push({
          ...item,
          success: true,
          apiKey: await review.review(ref),
        });
      } catch (error) {
        results.push({ ...item, success: false, error: toItemError(error) });
      }
    }
    await review.finish();
    return results;
  }

  /**
   * Asks for the approval decision once and returns `review`, which reviews one key with
   * it, and `finish`, which sends the call's notifications (the business service's
   * {@link DefaultPortalService.beginReview}). A DENY answers 403 at once; a CONDITIONAL
   * decision is applied to each key.
   */
  async #startReview(
    credentials: BackstageCredentials,
    decision: ReviewDecision,
    reason: string | undefined,
  ) {
    const actor = await this.#requireUser(
      credentials,
      'reviewing API key requests',
    );
    const [approval] = await this.#permissions.authorizeConditional(
      [{ permission: portalApiKeyApprovePermission }],
      { credentials },
    );
    if (approval.result === AuthorizeResult.DENY) {
      throw new NotAllowedError(
        'reviewing API key requests needs portal.apikey.approve',
      );
    }
    // Every key of one product needs the same Secret labels: one product read and one
    // AuthPolicy list per product and call (a live list per key on Kubernetes otherwise).
    const labelsByProduct = new Map<string, Promise<Record<string, string> | undefined>>();
    const secretLabelsOnce = (key: ApiKey) => {
      const id = `${key.metadata.namespace}/${key.spec.apiProductRef.name}`;
      let labels = labelsByProduct.get(id);
      if (!labels) {
        labels = this.#service.secretLabelsForKey(key);
        labelsByProduct.set(id, labels);
        // A failed read is tried again by the next key rather than failing all of them.
        labels.catch(() => labelsByProduct.delete(id));
      }
      return labels;
    };
    // The read scope tells a 404 from a 403 for a key the caller may not approve: asked
    // once per call, and only then, so that a call that approves costs one round trip.
    let readScope: Promise<Scope> | undefined;
    const readScopeOnce = () =>
      (readScope ??= this.#scope(
        credentials,
        portalApiKeyReadAllPermission,
        portalApiKeyReadOwnPermission,
      ));

    const keyReview = this.#service.beginReview(actor, decision, reason);
    const review = async (ref: ObjectRef) => {
      const { key, productOwnerRef } = await this.#keyAndProductOwner(ref);
      if (!key) {
        // Where a key can be hidden (a conditional approval), a missing one takes the
        // hidden one's round trip too: the two 404s must not differ in cost.
        if (approval.result !== AuthorizeResult.ALLOW) await readScopeOnce();
        throw keyNotFound(ref);
      }
      if (!this.#approvalAllows(approval, { apiKey: key, productOwnerRef })) {
        const scope = await readScopeOnce();
        const readable =
          scope === 'all' ||
          (scope === 'own' &&
            (isRequester(actor, key) || ownsRef(actor, productOwnerRef)));
        if (!readable) throw keyNotFound(ref);
        throw new NotAllowedError(
          `reviewing APIKey ${describeRef(ref)} needs portal.apikey.approve for its product (owned by ${productOwnerRef ?? 'nobody'})`,
        );
      }
      const secretLabels =
        decision === 'approve' ? ((await secretLabelsOnce(key)) ?? {}) : undefined;
      return keyReview.review(key, { secretLabels });
    };
    return { review, finish: keyReview.finish };
  }

  /**
   * A key and its product's owner, always in two store reads: for a missing key the
   * second reads the product named like the key, so that "missing" costs what "hidden"
   * costs.
   */
  async #keyAndProductOwner(
    ref: ObjectRef,
  ): Promise<{ key?: ApiKey; productOwnerRef?: string }> {
    const key = await this.#service.findKey(ref);
    const productOwnerRef = key
      ? await this.#service.productOwnerOfKey(key)
      : await this.#service.findProductOwner(ref);
    return { key, productOwnerRef };
  }

  #approvalAllows(
    decision: PolicyDecision,
    resource: PortalApiKeyResource,
  ): boolean {
    return authorizeApproval(decision, resource);
  }

  // --- identity and permission helpers -------------------------------------------------

  /** The permissions' decisions, asked in one round trip, as booleans in input order. */
  async #allowed(
    credentials: BackstageCredentials,
    permissions: BasicPermission[],
  ): Promise<boolean[]> {
    const decisions = await this.#permissions.authorize(
      permissions.map(permission => ({ permission })),
      { credentials },
    );
    return decisions.map(decision => decision.result === AuthorizeResult.ALLOW);
  }

  async #scope(
    credentials: BackstageCredentials,
    all: BasicPermission,
    own: BasicPermission,
  ): Promise<Scope> {
    const [allAllowed, ownAllowed] = await this.#allowed(credentials, [
      all,
      own,
    ]);
    return scopeOf(allAllowed, ownAllowed);
  }

  /** The calling user and its groups; undefined for service principals. */
  async #actor(
    credentials: BackstageCredentials,
  ): Promise<PortalActor | undefined> {
    const principal = credentials.principal as {
      type?: string;
      userEntityRef?: string;
    };
    if (principal.type !== 'user' || principal.userEntityRef === undefined) {
      return undefined;
    }
    const info = await this.#userInfo.getUserInfo(
      credentials as BackstageCredentials<{
        type: 'user';
        userEntityRef: string;
      }>,
    );
    // Lower case: owner annotations are stored normalised that way (entity refs are
    // case-insensitive), and the store compares owner refs exactly.
    const ownershipRefs = [
      ...new Set(
        [info.userEntityRef, ...info.ownershipEntityRefs].map(ref =>
          ref.toLocaleLowerCase('en-US'),
        ),
      ),
    ];
    return { userRef: info.userEntityRef, ownershipRefs };
  }

  async #requireUser(
    credentials: BackstageCredentials,
    what: string,
  ): Promise<PortalActor> {
    const actor = await this.#actor(credentials);
    if (!actor) {
      throw new NotAllowedError(
        `${what} needs a signed-in user; service principals may only read`,
      );
    }
    return actor;
  }
}
