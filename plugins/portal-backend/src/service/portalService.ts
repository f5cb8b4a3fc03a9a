/*
 * The portal API as the router sees it, implemented twice, like the catalog's
 * LocationService: DefaultPortalService does the work, AuthorizedPortalService wraps a
 * PortalService and decides who may do it (the router gets the authorized one).
 *
 * How the decorator takes part in a call without doing the service's work (the analogue of
 * the catalog's permission filter, which AuthorizedEntitiesCatalog hands down to the
 * catalog it wraps):
 * - lists take a narrowing filter (`ownerRefs`, `ownedBy`) the decorator adds for `.own`;
 * - calls on one record take a `check`: the service reads the record (a key always with its
 *   product's owner), hands it to `check`, and acts only if `check` returns. So the record
 *   is read once, the decision applies to what is changed, and a record the caller may not
 *   see costs what a missing one costs (the same reads, then the check).
 * The router never passes a check: without one, every record is allowed.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  ApiKey,
  ApiProduct,
  BulkReviewResult,
  McpGrant,
  McpGrantListQuery,
  McpTarget,
  ObjectRef,
  ProductListQuery,
  ReadOnlyObject,
} from '@devportal/plugin-portal-common';
import type {
  Page,
  PageRequest,
  ProductFilter,
  ReadOnlyKind,
  StoredApiProduct,
} from '../store/types';
import type {
  ApiProductPatch,
  CreateApiKeyRequest,
  CreateApiProductRequest,
  RequestQuery,
  ReviewDecision,
  UpdateApiKeyRequest,
} from './types';

/**
 * Query of the product list: the client's filters (`owner`: refs separated by commas), and
 * `ownerRefs`, which the decorator adds for `.own` callers; both narrow the list.
 */
export type ProductQuery = ProductListQuery & Pick<ProductFilter, 'ownerRefs'>;

/** A key as read for a call on it, with its product's owner; `key` undefined if missing. */
export interface KeyRecord {
  key: ApiKey | undefined;
  /** The owner of the key's product (for a missing key: of the product named like it). */
  productOwnerRef: string | undefined;
}

/**
 * A decision on the record a call acts on, made by the authorized layer: called with the
 * record as read (undefined, or a KeyRecord without key, when it does not exist); throws
 * (NotFoundError, NotAllowedError) to refuse. See the file comment.
 */
export type RecordCheck<R> = (record: R, ref: ObjectRef) => Promise<void>;

/** Checks the product a call acts on. */
export type ProductCheck = RecordCheck<StoredApiProduct | undefined>;

/** Checks the key a call acts on. */
export type KeyCheck = RecordCheck<KeyRecord>;

/**
 * Decides whether the caller may offer an MCP target (contract mcp-access §3.4), given the
 * target and its owner as the catalog has it; throws NotAllowedError to refuse.
 */
export type McpTargetCheck = (target: McpTarget, ownerRef: string) => void;

/**
 * The portal API as the router sees it: every method takes the caller's credentials.
 * Lists answer one page when given a {@link PageRequest} (its cursor already unsealed
 * from the client's token), otherwise the whole list as one page without cursor.
 */
export interface PortalService {
  listProducts(
    credentials: BackstageCredentials,
    query: ProductQuery,
    page?: PageRequest,
  ): Promise<Page<ApiProduct>>;
  getProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    check?: ProductCheck,
  ): Promise<ApiProduct>;
  /** `check` is given the target of an MCP product (not called for an HTTPRoute one). */
  createProduct(
    credentials: BackstageCredentials,
    request: CreateApiProductRequest,
    check?: McpTargetCheck,
  ): Promise<ApiProduct>;
  updateProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    patch: ApiProductPatch,
    check?: ProductCheck,
  ): Promise<ApiProduct>;
  deleteProduct(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    check?: ProductCheck,
  ): Promise<void>;
  listReadOnly(
    credentials: BackstageCredentials,
    kind: ReadOnlyKind,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ReadOnlyObject>>;
  getPlanPolicy(credentials: BackstageCredentials, ref: ObjectRef): Promise<ReadOnlyObject>;
  listRequests(
    credentials: BackstageCredentials,
    query: RequestQuery,
    page?: PageRequest,
  ): Promise<Page<ApiKey>>;
  listMyRequests(
    credentials: BackstageCredentials,
    query: { namespace?: string },
    page?: PageRequest,
  ): Promise<Page<ApiKey>>;
  /** `check` is given the product the key is requested for. */
  createRequest(
    credentials: BackstageCredentials,
    request: CreateApiKeyRequest,
    check?: ProductCheck,
  ): Promise<ApiKey>;
  updateRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    update: UpdateApiKeyRequest,
    check?: KeyCheck,
  ): Promise<ApiKey>;
  /** Deletes (an Approved key: revokes) a request; `reason` is told to its requester. */
  deleteRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    reason?: string,
    check?: KeyCheck,
  ): Promise<void>;
  /** Revokes an Approved key (deletes it and its secret); `reason` is told to its requester. */
  revokeRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    reason?: string,
    check?: KeyCheck,
  ): Promise<void>;
  reviewRequest(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    decision: ReviewDecision,
    reason?: string,
    check?: KeyCheck,
  ): Promise<ApiKey>;
  /** `check` decides each item on its own; a refused item fails alone. */
  bulkReview(
    credentials: BackstageCredentials,
    refs: ObjectRef[],
    decision: ReviewDecision,
    reason?: string,
    check?: KeyCheck,
  ): Promise<BulkReviewResult[]>;
  revealSecret(
    credentials: BackstageCredentials,
    ref: ObjectRef,
    check?: KeyCheck,
  ): Promise<string>;
  /** Live access grants of MCP products (contract mcp-access §4.8). */
  listMcpGrants(
    credentials: BackstageCredentials,
    query: McpGrantListQuery,
    page?: PageRequest,
  ): Promise<Page<McpGrant>>;
  /** One live grant by its access request; NotFoundError unless it is one now. */
  getMcpGrant(credentials: BackstageCredentials, ref: ObjectRef): Promise<McpGrant>;
}
