/*
 * The permission decorator of the portal: it implements PortalService and wraps a
 * PortalService (DefaultPortalService in the plugin), as the catalog's
 * AuthorizedLocationService wraps a LocationService. This layer decides; the inner service
 * does. Permission types live here only; business rules (validation, the bulk loop, Secret
 * labels, events, notifications) only in the inner service.
 *
 * How it decides on a record it does not read itself: it asks the permission framework
 * first (one round trip), then hands the inner service a `check` built from the decisions
 * (see portalService.ts). The inner service reads the record, calls the check, and acts
 * only if the check returns; lists get the `.own` narrowing as a filter. So a decision
 * applies to the very record that is changed, read once.
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
 * caller may not see take the same steps in the same order — the inner service's key read,
 * then its product read (for a missing key: the product named like the key), then the
 * check, which, when reviewing under a conditional approval, makes the read-scope round
 * trip that tells 404 from 403; the rest is decided in process (issue #20).
 *
 * Service principals may read (the permission framework allows them everything unless
 * their token has access restrictions); every change and the user-only routes need a
 * signed-in user (403 otherwise), since they record who did it.
 */
import type { BackstageCredentials, PermissionsService } from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import { AuthorizeResult, type BasicPermission } from '@backstage/plugin-permission-common';
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
  portalMcpGrantListPermission,
  portalPlanPolicyListPermission,
  portalPlanPolicyReadPermission,
  portalRateLimitPolicyListPermission,
  type ApiKey,
  type ApiProduct,
  type BulkReviewResult,
  describeMcpTarget,
  type McpGrantListQuery,
  type ObjectRef,
} from '@devportal/plugin-portal-common';
import { portalApiKeyRules, type PortalApiKeyResource } from '../permissions/rules';
import type { Page, PageRequest, ReadOnlyKind } from '../store/types';
import type { PortalActors } from './PortalActors';
import type {
  KeyCheck,
  KeyRecord,
  PortalService,
  ProductCheck,
  ProductQuery,
} from './portalService';
import { summarizeProductPatch } from './productPatch';
import { describeRef, keyNotFound, productNotFound, productOwnerOf } from './records';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  PortalActor,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';
import { isRequester, ownsRef, scopeOf, requireScope, type Scope } from './ownership';

/** The permission that guards each read-only kind's list. */
const READ_ONLY_LIST_PERMISSIONS: Record<ReadOnlyKind, BasicPermission> = {
  HTTPRoute: portalApiProductListPermission,
  PlanPolicy: portalPlanPolicyListPermission,
  AuthPolicy: portalAuthPolicyListPermission,
  RateLimitPolicy: portalRateLimitPolicyListPermission,
};

const authorizeApproval = createConditionAuthorizer<PortalApiKeyResource, unknown>(
  portalApiKeyRules,
);

/** Options of {@link AuthorizedPortalService.create}. */
export interface AuthorizedPortalServiceOptions {
  /** The service that does the work (DefaultPortalService in the plugin). */
  service: PortalService;
  permissions: PermissionsService;
  /** Who the caller is (the same instance as the inner service's: one look-up a request). */
  actors: PortalActors;
}

/** The permission decorator around a {@link PortalService}. */
export class AuthorizedPortalService implements PortalService {
  readonly #service: PortalService;
  readonly #permissions: PermissionsService;
  readonly #actors: PortalActors;

  static create(options: AuthorizedPortalServiceOptions): AuthorizedPortalService {
    return new AuthorizedPortalService(options);
  }

  private constructor(options: AuthorizedPortalServiceOptions) {
    this.#service = options.service;
    this.#permissions = options.permissions;
    this.#actors = options.actors;
  }

  // --- API products --------------------------------------------------------------------

  async listProducts(
    credentials: BackstageCredentials,
    query: ProductQuery,
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
      return this.#service.listProducts(credentials, query, page);
    }
    const actor = await this.#actors.actorOf(credentials);
    if (!actor) return { items: [] };
    return this.#service.listProducts(
      credentials,
      { ...query, ownerRefs: actor.ownershipRefs },
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
    return this.#service.getProduct(credentials, ref, async product => {
      if (!product) throw productNotFound(ref);
      if (scope === 'own') {
        const actor = await this.#actors.actorOf(credentials);
        if (!ownsRef(actor, productOwnerOf(product))) throw productNotFound(ref);
      }
    });
  }

  async createProduct(credentials: BackstageCredentials, request: CreateApiProductRequest) {
    const actor = await this.#actors.requireUser(credentials, 'creating an API product');
    const [create, updateAll] = await this.#allowed(credentials, [
      portalApiProductCreatePermission,
      portalApiProductUpdateAllPermission,
    ]);
    if (!create) {
      throw new NotAllowedError('creating API products needs portal.apiproduct.create');
    }
    // An MCP target may be offered by its owners, or by whoever may change every product.
    const ownRefs = actor.ownershipRefs.map(ref => ref.toLocaleLowerCase('en-US'));
    return this.#service.createProduct(credentials, request, (target, ownerRef) => {
      if (!updateAll && !ownRefs.includes(ownerRef)) {
        throw new NotAllowedError(
          `only the owners of ${describeMcpTarget(target)} (${ownerRef}) may offer it as a product`,
        );
      }
    });
  }

  async updateProduct(credentials: BackstageCredentials, ref: ObjectRef, patch: ApiProductPatch) {
    const actor = await this.#actors.requireUser(credentials, 'updating an API product');
    const { scope, check } = await this.#productChangeCheck(
      credentials,
      actor,
      portalApiProductUpdateAllPermission,
      portalApiProductUpdateOwnPermission,
      'updating',
    );
    return this.#service.updateProduct(credentials, ref, patch, async (product, productRef) => {
      await check(product, productRef);
      // The owner and the route are `.all` matters even for the product's owner.
      const { changesOwner, changesTargetRef } = summarizeProductPatch(
        product!, // the check throws for a missing product
        patch,
      );
      if (scope === 'own' && (changesOwner || changesTargetRef)) {
        throw new NotAllowedError(
          `changing ${changesOwner ? 'the owner annotation' : 'spec.targetRef'} needs portal.apiproduct.update.all`,
        );
      }
    });
  }

  async deleteProduct(credentials: BackstageCredentials, ref: ObjectRef) {
    const actor = await this.#actors.requireUser(credentials, 'deleting an API product');
    const { check } = await this.#productChangeCheck(
      credentials,
      actor,
      portalApiProductDeleteAllPermission,
      portalApiProductDeleteOwnPermission,
      'deleting',
    );
    await this.#service.deleteProduct(credentials, ref, check);
  }

  /**
   * The check of a change to a product: neither permission → 403 at once; missing or not
   * readable → 404; readable but `.own` only and not owned → 403.
   */
  async #productChangeCheck(
    credentials: BackstageCredentials,
    actor: PortalActor,
    allPermission: BasicPermission,
    ownPermission: BasicPermission,
    verb: string,
  ): Promise<{ scope: 'all' | 'own'; check: ProductCheck }> {
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
    const check: ProductCheck = async (product, ref) => {
      if (!product) throw productNotFound(ref);
      if (scope === 'own' && !ownsRef(actor, productOwnerOf(product))) {
        if (readAll) {
          throw new NotAllowedError(
            `${verb} APIProduct ${describeRef(ref)} needs ${allPermission.name}: you do not own it`,
          );
        }
        throw productNotFound(ref);
      }
    };
    return { scope, check };
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
    return this.#service.listReadOnly(credentials, kind, query, page);
  }

  async getPlanPolicy(credentials: BackstageCredentials, ref: ObjectRef) {
    const [allowed] = await this.#allowed(credentials, [portalPlanPolicyReadPermission]);
    if (!allowed) {
      throw new NotAllowedError(
        `reading PlanPolicies needs ${portalPlanPolicyReadPermission.name}`,
      );
    }
    return this.#service.getPlanPolicy(credentials, ref);
  }

  // --- API key requests ----------------------------------------------------------------

  async listRequests(
    credentials: BackstageCredentials,
    query: RequestQuery,
    page?: PageRequest,
  ): Promise<Page<ApiKey>> {
    const scope = requireScope(
      await this.#scope(credentials, portalApiKeyReadAllPermission, portalApiKeyReadOwnPermission),
      'listing API key requests needs portal.apikey.read.own or portal.apikey.read.all',
    );
    if (scope === 'all') {
      return this.#service.listRequests(credentials, query, page);
    }
    const actor = await this.#actors.actorOf(credentials);
    if (!actor) return { items: [] };
    return this.#service.listRequests(
      credentials,
      {
        ...query,
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
    await this.#actors.requireUser(credentials, 'listing your own requests');
    requireScope(
      await this.#scope(credentials, portalApiKeyReadAllPermission, portalApiKeyReadOwnPermission),
      'listing your API key requests needs portal.apikey.read.own',
    );
    return this.#service.listMyRequests(credentials, query, page);
  }

  async createRequest(credentials: BackstageCredentials, request: CreateApiKeyRequest) {
    const actor = await this.#actors.requireUser(credentials, 'requesting an API key');
    const [create, readAll, readOwn] = await this.#allowed(credentials, [
      portalApiKeyCreatePermission,
      portalApiProductReadAllPermission,
      portalApiProductReadOwnPermission,
    ]);
    if (!create) {
      throw new NotAllowedError('requesting API keys needs portal.apikey.create');
    }
    return this.#service.createRequest(credentials, request, async (product, ref) => {
      const visible =
        product !== undefined && (readAll || (readOwn && ownsRef(actor, productOwnerOf(product))));
      if (!visible) throw productNotFound(ref);
    });
  }

  async updateRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    update: UpdateApiKeyRequest,
  ) {
    const check = await this.#requesterChangeCheck(
      credentials,
      'editing an API key request',
      portalApiKeyUpdateAllPermission,
      portalApiKeyUpdateOwnPermission,
      'editing',
    );
    return this.#service.updateRequest(credentials, ref, update, check);
  }

  async deleteRequest(credentials: BackstageCredentials, ref: ObjectRef, reason?: string) {
    const check = await this.#requesterChangeCheck(
      credentials,
      'deleting an API key request',
      portalApiKeyDeleteAllPermission,
      portalApiKeyDeleteOwnPermission,
      'deleting',
    );
    await this.#service.deleteRequest(credentials, ref, reason, check);
  }

  /**
   * Admins (`portal.apikey.delete.all`) may revoke any key; otherwise the approval decision
   * applies (the product's owners under IS_PRODUCT_OWNER), one decision per call.
   */
  async revokeRequest(credentials: BackstageCredentials, ref: ObjectRef, reason?: string) {
    await this.#actors.requireUser(credentials, 'revoking an API key');
    const [deleteAll] = await this.#allowed(credentials, [portalApiKeyDeleteAllPermission]);
    const check: KeyCheck = deleteAll
      ? async ({ key }, keyRef) => {
          if (!key) throw keyNotFound(keyRef);
        }
      : await this.#reviewCheck(credentials, 'revoking');
    await this.#service.revokeRequest(credentials, ref, reason, check);
  }

  async revealSecret(credentials: BackstageCredentials, ref: ObjectRef) {
    const check = await this.#requesterChangeCheck(
      credentials,
      'reading an API key secret',
      portalApiKeyReadAllPermission,
      portalApiKeyReadOwnPermission,
      'reading the secret of',
    );
    return this.#service.revealSecret(credentials, ref, check);
  }

  /**
   * The check of an action on a key where `.own` means the requester only (edit, delete,
   * secret): neither permission → 403 at once; missing or not readable → 404; readable
   * (e.g. as product owner) but not the requester → 403.
   */
  async #requesterChangeCheck(
    credentials: BackstageCredentials,
    what: string,
    allPermission: BasicPermission,
    ownPermission: BasicPermission,
    verb: string,
  ): Promise<KeyCheck> {
    const actor = await this.#actors.requireUser(credentials, what);
    const permissions =
      allPermission === portalApiKeyReadAllPermission
        ? [allPermission, ownPermission]
        : [
            allPermission,
            ownPermission,
            portalApiKeyReadAllPermission,
            portalApiKeyReadOwnPermission,
          ];
    const [all, own, readAll = all, readOwn = own] = await this.#allowed(credentials, permissions);
    const scope = requireScope(
      scopeOf(all, own),
      `${verb} API key requests needs ${ownPermission.name} or ${allPermission.name}`,
    );
    return async ({ key, productOwnerRef }, ref) => {
      if (!key) throw keyNotFound(ref);
      if (scope === 'all' || isRequester(actor, key)) return;
      const readable = readAll || (readOwn && ownsRef(actor, productOwnerRef));
      if (readable) {
        throw new NotAllowedError(
          `${verb} APIKey ${describeRef(ref)} is for its requester only (or needs ${allPermission.name})`,
        );
      }
      throw keyNotFound(ref);
    };
  }

  async reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason?: string,
  ) {
    const check = await this.#reviewCheck(credentials, 'reviewing');
    return this.#service.reviewRequest(credentials, ref, decision, reason, check);
  }

  async bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason?: string,
  ): Promise<BulkReviewResult[]> {
    const check = await this.#reviewCheck(credentials, 'reviewing');
    return this.#service.bulkReview(credentials, refs, decision, reason, check);
  }

  /**
   * Asks for the approval decision once per call and returns the check that applies it to
   * each key. A DENY answers 403 at once; a CONDITIONAL decision is applied to each key
   * with the IS_PRODUCT_OWNER rule, so a bulk call decides every item on its own.
   */
  async #reviewCheck(
    credentials: BackstageCredentials,
    verb: 'reviewing' | 'revoking',
  ): Promise<KeyCheck> {
    const actor = await this.#actors.requireUser(credentials, `${verb} API key requests`);
    const [approval] = await this.#permissions.authorizeConditional(
      [{ permission: portalApiKeyApprovePermission }],
      { credentials },
    );
    if (approval.result === AuthorizeResult.DENY) {
      throw new NotAllowedError(
        verb === 'reviewing'
          ? 'reviewing API key requests needs portal.apikey.approve'
          : 'revoking API keys needs portal.apikey.delete.all, or portal.apikey.approve for their product',
      );
    }
    // The read scope tells a 404 from a 403 for a key the caller may not approve: asked
    // once per call, and only then, so that a call that approves costs one round trip.
    let readScope: Promise<Scope> | undefined;
    const readScopeOnce = () =>
      (readScope ??= this.#scope(
        credentials,
        portalApiKeyReadAllPermission,
        portalApiKeyReadOwnPermission,
      ));
    return async ({ key, productOwnerRef }: KeyRecord, ref: ObjectRef) => {
      if (!key) {
        // Where a key can be hidden (a conditional approval), a missing one takes the
        // hidden one's round trip too: the two 404s must not differ in cost.
        if (approval.result !== AuthorizeResult.ALLOW) await readScopeOnce();
        throw keyNotFound(ref);
      }
      if (authorizeApproval(approval, { apiKey: key, productOwnerRef })) return;
      const scope = await readScopeOnce();
      const readable =
        scope === 'all' ||
        (scope === 'own' && (isRequester(actor, key) || ownsRef(actor, productOwnerRef)));
      if (!readable) throw keyNotFound(ref);
      throw new NotAllowedError(
        `${verb} APIKey ${describeRef(ref)} needs portal.apikey.approve for its product (owned by ${productOwnerRef ?? 'nobody'})`,
      );
    };
  }

  // --- MCP access grants (the broker's portal module) -----------------------------------

  async listMcpGrants(
    credentials: BackstageCredentials,
    query: McpGrantListQuery,
    page?: PageRequest,
  ) {
    await this.#requireMcpGrantList(credentials);
    return this.#service.listMcpGrants(credentials, query, page);
  }

  async getMcpGrant(credentials: BackstageCredentials, ref: ObjectRef) {
    await this.#requireMcpGrantList(credentials);
    return this.#service.getMcpGrant(credentials, ref);
  }

  async #requireMcpGrantList(credentials: BackstageCredentials) {
    const [allowed] = await this.#allowed(credentials, [portalMcpGrantListPermission]);
    if (!allowed) {
      throw new NotAllowedError(
        `reading MCP access grants needs ${portalMcpGrantListPermission.name}`,
      );
    }
  }

  // --- permission helpers ---------------------------------------------------------------

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
    const [allAllowed, ownAllowed] = await this.#allowed(credentials, [all, own]);
    return scopeOf(allAllowed, ownAllowed);
  }
}
