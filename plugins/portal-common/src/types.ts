/**
 * Types of the portal REST API (`/api/portal`), shared by the backend, the frontend and
 * scripts. None is written by hand: each is inferred from the zod schema the router
 * validates with (requests, ./requestSchemas.ts) or the document describes answers with
 * (./resourceSchemas.ts, ./responseSchemas.ts), so a type cannot say what the server does
 * not. Request bodies are the schemas' input (what a client sends); records and answers
 * their output.
 */
import type { z } from 'zod';
import type {
  apiProductPatchSchema,
  bulkReviewSchema,
  createApiKeyRequestSchema,
  createApiProductSchema,
  deleteRequestQuerySchema,
  mcpGrantListQuerySchema,
  namespaceQuerySchema,
  objectRefSchema,
  productListQuerySchema,
  requestListQuerySchema,
  reviewSchema,
  updateApiKeyRequestSchema,
} from './requestSchemas';
import type {
  apiKeyPhaseSchema,
  apiKeySchema,
  apiKeySpecSchema,
  apiKeyStatusSchema,
  apiProductSchema,
  apiProductSpecSchema,
  apiProductStatusSchema,
  approvalModeSchema,
  mcpGrantSchema,
  objectMetaSchema,
  planSchema,
  publishStatusSchema,
  readOnlyObjectSchema,
  targetRefSchema,
} from './resourceSchemas';
import type {
  apiKeySecretSchema,
  bulkReviewResponseSchema,
  bulkReviewResultSchema,
  errorResponseBodySchema,
  listMetadataSchema,
  listPageSchema,
} from './responseSchemas';

/** Object metadata as the API returns it (never `managedFields`). @public */
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** A generic Kubernetes-shaped object. @public */
export interface KubeObject<Spec = unknown, Status = unknown> {
  apiVersion: string;
  kind: string;
  metadata: ObjectMeta;
  spec: Spec;
  status?: Status;
}

/** `manual`: an owner decides each request; `automatic`: requests are approved at once. @public */
export type ApprovalMode = z.infer<typeof approvalModeSchema>;
/** Only `Published` products take key requests. @public */
export type PublishStatus = z.infer<typeof publishStatusSchema>;
/** Where a key request stands: Pending until reviewed. @public */
export type ApiKeyPhase = z.infer<typeof apiKeyPhaseSchema>;

/** The route an API product exposes. @public */
export type TargetRef = z.infer<typeof targetRefSchema>;

/** The `spec` of an API product (defaults filled in). @public */
export type ApiProductSpec = z.infer<typeof apiProductSpecSchema>;

/** A plan offered by a product (from the PlanPolicies targeting its route). @public */
export type Plan = z.infer<typeof planSchema>;

/** The `status` of an API product: the plans of its route. @public */
export type ApiProductStatus = z.infer<typeof apiProductStatusSchema>;

/** An API product. @public */
export type ApiProduct = z.infer<typeof apiProductSchema>;

/** The `spec` of an API key request. @public */
export type ApiKeySpec = z.infer<typeof apiKeySpecSchema>;

/** The `status` of an API key request (set by the server only). @public */
export type ApiKeyStatus = z.infer<typeof apiKeyStatusSchema>;

/** An API key request. @public */
export type ApiKey = z.infer<typeof apiKeySchema>;

/** A read-only object (HTTPRoute, PlanPolicy, AuthPolicy, RateLimitPolicy). @public */
export type ReadOnlyObject = z.infer<typeof readOnlyObjectSchema>;

/** Body of `POST /apiproducts`. @public */
export type CreateApiProductRequest = z.input<typeof createApiProductSchema>;

/**
 * A JSON merge patch of an API product: `spec` fields (`null` removes an optional one),
 * `metadata.labels`, the owner annotation and an optional `metadata.resourceVersion`
 * precondition.
 *
 * @public
 */
export type ApiProductPatch = z.input<typeof apiProductPatchSchema>;

/** Body of `POST /requests`. @public */
export type CreateApiKeyRequest = z.input<typeof createApiKeyRequestSchema>;

/** Body of `PATCH /requests/:namespace/:name`. @public */
export type UpdateApiKeyRequest = z.input<typeof updateApiKeyRequestSchema>;

/** Body of `POST /requests/:namespace/:name/approve` and `/reject`. @public */
export type ReviewRequest = z.input<typeof reviewSchema>;

/** Query of `DELETE /requests/:namespace/:name` (the reason told to the requester). @public */
export type DeleteRequestQuery = z.output<typeof deleteRequestQuerySchema>;

/** A `{namespace, name}` reference. @public */
export type ObjectRef = z.infer<typeof objectRefSchema>;

/** Body of `POST /requests/bulk-approve` and `/bulk-reject`. @public */
export type BulkReviewRequest = z.input<typeof bulkReviewSchema>;

/** One item of a bulk answer, in input order. @public */
export type BulkReviewResult = z.infer<typeof bulkReviewResultSchema>;

/** The answer of `bulk-approve` and `bulk-reject`. @public */
export type BulkReviewResponse = z.infer<typeof bulkReviewResponseSchema>;

/** The answer of the one-time secret read. @public */
export type ApiKeySecret = z.infer<typeof apiKeySecretSchema>;

/** The body of every error answer. @public */
export type PortalErrorResponseBody = z.infer<typeof errorResponseBodySchema>;

/**
 * Paging state of a list answer: `continue` is present exactly when more items follow.
 * @public
 */
export type ListMetadata = z.infer<typeof listMetadataSchema>;

/** A list answer, whole or one page: `{items, metadata: {continue?}}`. @public */
export type ListPage<T> = z.infer<ReturnType<typeof listPageSchema<z.ZodType<T>>>>;

/** A `{items}` list answer. @public */
export type ItemList<T> = Pick<ListPage<T>, 'items'>;

/**
 * Paging parameters of every list (spec §9): `limit` 1–1000; `continue` is the
 * previous page's `metadata.continue` (opaque, bound to the route, the filters and the
 * caller). Without `limit` the whole list comes back.
 * @public
 */
export type PageQuery = Pick<z.output<typeof namespaceQuerySchema>, 'limit' | 'continue'>;

/** Filter of `GET /requests`. @public */
export type RequestListQuery = Omit<z.output<typeof requestListQuerySchema>, keyof PageQuery>;

/** Filter of `GET /apiproducts`. @public */
export type ProductListQuery = Omit<z.output<typeof productListQuerySchema>, keyof PageQuery>;

/** Filter of the lists that filter by namespace only. @public */
export type NamespaceListQuery = Omit<z.output<typeof namespaceQuerySchema>, keyof PageQuery>;

/** A live access grant of an MCP product. @public */
export type McpGrant = z.infer<typeof mcpGrantSchema>;

/** The filters of `GET /mcp/grants` (without paging). @public */
export type McpGrantListQuery = Omit<z.output<typeof mcpGrantListQuerySchema>, keyof PageQuery>;
