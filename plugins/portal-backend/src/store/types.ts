/*
 * The storage contract of the portal. Two implementations pass one shared contract
 * suite: DatabasePortalStore (Backstage's database: SQLite, PostgreSQL) and
 * KubernetesPortalStore (custom resources).
 *
 * Guarantees every implementation gives:
 * - Each method is atomic from the caller's point of view: it either happens whole or
 *   throws, leaving nothing half-written (cascade deletes may be completed by a retry).
 * - State changes are compare-and-set: `reviewKey` moves a key out of Pending only if it
 *   is still Pending; `revealSecret` hands the secret out exactly once under any number of
 *   concurrent callers; `replaceProduct` writes only over the resourceVersion it was given.
 * - Errors are `@backstage/errors`: NotFoundError (no such record), ConflictError (already
 *   exists, stale resourceVersion, wrong phase, secret already revealed),
 *   ServiceUnavailableError (the backing store is unreachable or timed out).
 * - Secrets never appear in returned objects; only `revealSecret` returns one.
 * - Ownership filters are evaluated by the store (indexes, label selectors), never by
 *   listing everything and filtering in memory.
 *
 * The store knows nothing of permissions or HTTP; the service enforces the business rules
 * (validation, who may do what) and the store enforces atomicity.
 */
import type {
  ApiKey,
  ApiKeyPhase,
  ApiKeySpec,
  ApiProduct,
  ApiProductSpec,
  McpTargetKind,
  ObjectRef,
  ReadOnlyObject,
} from '@devportal/plugin-portal-common';

/** An API product as stored: `status.plans` is derived by the service, not stored. */
export type StoredApiProduct = Omit<ApiProduct, 'status'>;

/** Input of {@link PortalStore.createProduct}. */
export interface NewApiProduct {
  namespace: string;
  name: string;
  labels?: Record<string, string>;
  /** Must include the owner annotation (`backstage.io/owner`). */
  annotations: Record<string, string>;
  spec: ApiProductSpec;
}

/** Input of {@link PortalStore.createKey}: the store generates the name. */
export interface NewApiKey {
  /** The product's namespace (keys live next to their product). */
  namespace: string;
  spec: ApiKeySpec;
  /** Set for automatic approval: the key is created Approved with this secret. */
  approval?: KeyApproval;
}

/** What an approval records. */
export interface KeyApproval {
  reviewedBy: string;
  reason?: string;
  /**
   * The API key itself (≥ 32 random bytes, base64url); stored apart from the record. Absent
   * for an access request of an MCP product: no secret is issued (contract mcp-access §4.1).
   */
  secret?: string;
  /**
   * Labels the stored secret needs so the gateway accepts the key (those the route's
   * AuthPolicies select API key Secrets by, see `keySecretLabelsOfPolicies`). The
   * Kubernetes store puts them on the key's Secret, its own labels winning; the database
   * store ignores them (no gateway reads its secrets).
   */
  secretLabels?: Record<string, string>;
}

/** A review decision for {@link PortalStore.reviewKey}. */
export type KeyReview =
  | ({ phase: 'Approved' } & KeyApproval)
  | { phase: 'Rejected'; reviewedBy: string; reason?: string };

/**
 * A condition of {@link PortalStore.replaceProduct}: no live access grant of the product (an
 * Approved key, unexpired at `now`) has one of `tiers` (the plan tiers the new spec drops).
 */
export interface UnusedTiersCondition {
  tiers: readonly string[];
  now: Date;
}

/** Changes to a Pending key; `expiresAt: null` clears it. */
export interface PendingKeyUpdate {
  planTier?: string;
  useCase?: string;
  expiresAt?: string | null;
}

/** Filter of {@link PortalStore.listProducts}. */
export interface ProductFilter {
  namespace?: string;
  /** Only products whose owner annotation is one of these entity refs. */
  ownerRefs?: string[];
  /** Only products whose `spec.targetRef.kind` is this one. */
  targetKind?: 'HTTPRoute' | McpTargetKind;
  /** Only products whose `spec.targetRef.name` is this one (with `targetKind` only). */
  targetName?: string;
}

/** Filter of {@link PortalStore.listMcpGrantsPage}; all given conditions must hold. */
export interface McpGrantFilter {
  namespace?: string;
  /** Only grants of this product (in `namespace`, which must then be given). */
  productName?: string;
  /** Only grants on this kind of target. */
  targetKind?: McpTargetKind;
  /** Only grants on the target of this name (with `targetKind` only). */
  targetName?: string;
  /** Only grants requested by this user entity ref. */
  requestedBy?: string;
}

/**
 * A live access grant as the store reads it (contract mcp-access §4.8): an Approved access
 * request of an MCP product whose `spec.expiresAt` is absent or after the time asked about,
 * with its product as stored now (for the plan of its tier and the display name).
 */
export interface StoredMcpGrant {
  key: ApiKey;
  product: StoredApiProduct;
}

/** Filter of {@link PortalStore.listKeys}; all given conditions must hold. */
export interface KeyFilter {
  namespace?: string;
  phase?: ApiKeyPhase;
  /** Only keys of this product (in `namespace`, which must then be given). */
  productName?: string;
  /** Only keys requested by this user entity ref. */
  requestedBy?: string;
  /** Only keys of products whose owner annotation is one of these entity refs. */
  productOwnerRefs?: string[];
  /**
   * Only keys the caller owns: requested by `userRef`, or for a product whose owner is
   * one of `ownershipRefs` (the caller's user ref and groups).
   */
  ownedBy?: { userRef: string; ownershipRefs: string[] };
}

/**
 * One page of a list: at most `limit` items after the position `cursor` marks. The
 * cursor is the store's own opaque text (the router seals it into the client's token).
 */
export interface PageRequest {
  /** Most items in the page (1–1000 from the router). */
  limit: number;
  /** The position after which the page starts: `Page.cursor` of the previous page. */
  cursor?: string;
}

/**
 * A page of a list. `cursor` is present exactly when more items follow. Pages follow a
 * stable order in which an item keeps its place while it exists, so a walk never
 * returns an item twice and never skips one that existed before the walk began (items
 * created during the walk may or may not appear). The database store orders by
 * creation time, namespace, name; the Kubernetes store by the API server's order
 * (namespace, name).
 */
export interface Page<T> {
  items: T[];
  cursor?: string;
}

/** Storage of API products, API keys and their secrets. */
export interface PortalStore {
  /** Creates a product; ConflictError when the namespace/name exists. */
  createProduct(product: NewApiProduct): Promise<StoredApiProduct>;
  getProduct(ref: ObjectRef): Promise<StoredApiProduct | undefined>;
  listProducts(filter: ProductFilter): Promise<StoredApiProduct[]>;
  /** One page of {@link PortalStore.listProducts}; InputError for a cursor not its own. */
  listProductsPage(filter: ProductFilter, page: PageRequest): Promise<Page<StoredApiProduct>>;
  /**
   * Replaces spec, labels and annotations of a product, only if its current
   * resourceVersion equals `product.metadata.resourceVersion` (ConflictError otherwise)
   * and, given `unused`, only if no live grant has one of its tiers (ConflictError naming
   * the tier and the count). The database store checks and writes in one transaction that
   * an approval of the tier cannot interleave with (see `reviewKey`); the Kubernetes store
   * counts, then writes (it has no transaction across objects).
   */
  replaceProduct(
    product: StoredApiProduct,
    unused?: UnusedTiersCondition,
  ): Promise<StoredApiProduct>;
  /**
   * Deletes a product's keys and their secrets (same namespace only), then the product.
   * NotFoundError when the product does not exist. If it fails part-way, a retry finishes.
   */
  deleteProduct(ref: ObjectRef): Promise<void>;

  /**
   * Creates a key request with a generated name. NotFoundError when its product is gone;
   * ConflictError when the same requester already has a Pending key for the same
   * product and tier.
   */
  createKey(key: NewApiKey): Promise<ApiKey>;
  getKey(ref: ObjectRef): Promise<ApiKey | undefined>;
  listKeys(filter: KeyFilter): Promise<ApiKey[]>;
  /** One page of {@link PortalStore.listKeys}; InputError for a cursor not its own. */
  listKeysPage(filter: KeyFilter, page: PageRequest): Promise<Page<ApiKey>>;
  /** Edits a key only while it is Pending (ConflictError naming the phase otherwise). */
  updatePendingKey(ref: ObjectRef, update: PendingKeyUpdate): Promise<ApiKey>;
  /**
   * Moves a key from Pending to Approved or Rejected (ConflictError naming the phase
   * otherwise). Database store: an access request (an MCP product's key) is approved only
   * while its product still offers its tier, checked under the product row's lock, so a
   * concurrent `replaceProduct` that drops the tier either sees the grant or refuses it
   * (ConflictError). `createKey` with an approval checks the same way.
   */
  reviewKey(ref: ObjectRef, review: KeyReview): Promise<ApiKey>;
  /**
   * Returns the secret of an Approved key the first time only and marks it revealed, in
   * one atomic step. ConflictError when not Approved or already revealed.
   */
  revealSecret(ref: ObjectRef): Promise<string>;
  /** Deletes a key in any phase, and its secret (which revokes it). */
  deleteKey(ref: ObjectRef): Promise<void>;
  /**
   * Claims up to `limit` keys whose expiry is to be announced: Approved, `spec.expiresAt` at
   * or before `now`, not claimed before. Each claim is a compare-and-set, so under any number
   * of concurrent callers (replicas) each key is returned to exactly one of them, once for
   * ever. Claiming changes nothing of the API object (no new resourceVersion in the database
   * store; an annotation of the store's own in the Kubernetes store).
   */
  claimExpiryAnnouncements(now: Date, limit: number): Promise<ApiKey[]>;

  /**
   * One page of the live access grants at `now` matching `filter` (see {@link StoredMcpGrant}),
   * in the order of {@link Page}. Reads the index of access requests by target, not every key;
   * InputError for a cursor not its own or a product filter without namespace.
   */
  listMcpGrantsPage(
    filter: McpGrantFilter,
    now: Date,
    page: PageRequest,
  ): Promise<Page<StoredMcpGrant>>;
  /**
   * How many keys of `product` with plan tier `tier` are live at `now`: Approved, and
   * `spec.expiresAt` absent or after `now`. 0 for a product that does not exist.
   */
  countLiveGrants(product: ObjectRef, tier: string, now: Date): Promise<number>;
}

/** The read-only Kuadrant and Gateway API kinds the portal lists. */
export type ReadOnlyKind = 'HTTPRoute' | 'PlanPolicy' | 'AuthPolicy' | 'RateLimitPolicy';

/**
 * Where HTTPRoutes and policies come from: manifest files (database storage) or the
 * cluster (kubernetes storage).
 */
export interface ReadOnlyResourceSource {
  list(kind: ReadOnlyKind, options?: { namespace?: string }): Promise<ReadOnlyObject[]>;
  /** One page of {@link ReadOnlyResourceSource.list} (see {@link Page} for the order). */
  listPage(
    kind: ReadOnlyKind,
    options: { namespace?: string },
    page: PageRequest,
  ): Promise<Page<ReadOnlyObject>>;
  get(kind: ReadOnlyKind, ref: ObjectRef): Promise<ReadOnlyObject | undefined>;
}
