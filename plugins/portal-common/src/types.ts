/**
 * Types of the portal REST API (`/api/portal`), shared by the backend, the
 * frontend and scripts. Every record is a Kubernetes-shaped object.
 */

/** apiVersion of the portal's own kinds. @public */
export const DEVPORTAL_API_VERSION = 'devportal.kuadrant.io/v1alpha1';

/** The annotation holding an API product's owner (an entity ref). @public */
export const OWNER_ANNOTATION = 'backstage.io/owner';

/** `reviewedBy` of keys approved by a product in automatic approval mode. @public */
export const AUTOMATIC_APPROVAL_REVIEWER = 'system:automatic-approval';

/** Object metadata as the API returns it (never `managedFields`). @public */
export interface ObjectMeta {
  namespace: string;
  name: string;
  uid: string;
  resourceVersion: string;
  creationTimestamp: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

/** A generic Kubernetes-shaped object. @public */
export interface KubeObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** @public */
export type ApprovalMode = 'manual' | 'automatic';
/** @public */
export type PublishStatus = 'Draft' | 'Published';
/** @public */
export type ApiKeyPhase = 'Pending' | 'Approved' | 'Rejected';

/** The route an API product exposes. @public */
export interface TargetRef {
  group: 'gateway.networking.k8s.io';
  kind: 'HTTPRoute';
  name: string;
}

/** @public */
export interface ApiProductSpec {
  displayName: string;
  description?: string;
  version?: string;
  targetRef: TargetRef;
  approvalMode: ApprovalMode;
  publishStatus: PublishStatus;
  tags?: string[];
  documentation?: { openAPISpecURL?: string; docsURL?: string };
  contact?: { email?: string; team?: string; url?: string };
}

/** A plan offered by a product (from the PlanPolicies targeting its route). @public */
export interface Plan {
  tier: string;
  description?: string;
  limits?: Record<string, unknown>;
}

/** @public */
export interface ApiProductStatus {
  plans: Plan[];
}

/** @public */
export type ApiProduct = KubeObject<ApiProductSpec, ApiProductStatus> & {
  kind: 'APIProduct';
};

/** @public */
export interface ApiKeySpec {
  apiProductRef: { name: string };
  planTier: string;
  useCase?: string;
  requestedBy: { userId: string; email?: string };
  expiresAt?: string;
}

/** @public */
export interface ApiKeyStatus {
  phase: ApiKeyPhase;
  reviewedBy?: string;
  reviewedAt?: string;
  reason?: string;
  secretRevealed: boolean;
  secretRevealedAt?: string;
}

/** An API key request. @public */
export type ApiKey = KubeObject<ApiKeySpec, ApiKeyStatus> & { kind: 'APIKey' };

/** Body of `POST /apiproducts`. @public */
export interface CreateApiProductRequest {
  metadata: {
    namespace: string;
    name: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec: Omit<ApiProductSpec, 'approvalMode' | 'publishStatus'> &
    Partial<Pick<ApiProductSpec, 'approvalMode' | 'publishStatus'>>;
}

/** Body of `POST /requests`. @public */
export interface CreateApiKeyRequest {
  apiProductRef: { namespace: string; name: string };
  planTier: string;
  useCase?: string;
  email?: string;
  expiresAt?: string;
}

/** Body of `PATCH /requests/:namespace/:name`. @public */
export interface UpdateApiKeyRequest {
  planTier?: string;
  useCase?: string;
  expiresAt?: string | null;
}

/** A `{namespace, name}` reference. @public */
export interface ObjectRef {
  namespace: string;
  name: string;
}

/** Body of `POST /requests/bulk-approve` and `/bulk-reject`. @public */
export interface BulkReviewRequest {
  requests: ObjectRef[];
  reason?: string;
}

/** One item of a bulk answer, in input order. @public */
export type BulkReviewResult =
  | (ObjectRef & { success: true; apiKey: ApiKey })
  | (ObjectRef & {
      success: false;
      error: { name: string; message: string; statusCode: number };
    });

/** A `{items}` list answer. @public */
export interface ItemList<T> {
  items: T[];
}

/**
 * Paging state of a list answer: `continue` is present exactly when more items follow.
 * @public
 */
export interface ListMetadata {
  continue?: string;
}

/** A list answer, whole or one page: `{items, metadata: {continue?}}`. @public */
export interface ListPage<T> extends ItemList<T> {
  metadata: ListMetadata;
}

/**
 * Paging parameters of every list (spec §9): `limit` 1–1000; `continue` is the
 * previous page's `metadata.continue` (opaque, bound to the route, the filters and the
 * caller). Without `limit` the whole list comes back.
 * @public
 */
export interface PageQuery {
  limit?: number;
  continue?: string;
}
