/*
 * The portal's operations (spec §4), one entry each: method, path, the zod schemas of what
 * it reads (body, query) and of what it answers, and its success status. This table is the
 * contract's one source:
 * - the backend's router binds a handler to each entry and validates with its schemas;
 * - openapi.yaml must list exactly these operations, and its request and response schemas
 *   are generated from the entries' schemas (the backend's OpenAPI test fails while the
 *   checked-in document differs);
 * - PortalClient builds each call from its entry, and its parameter and return types are
 *   the entry's (the backend's client contract test checks both, and drives every method
 *   against the running plugin).
 *
 * Each schema is written `x as typeof x` so that the declaration of this table (and the API
 * report) names it instead of repeating its whole type.
 */
import type { z } from 'zod';
import {
  apiProductPatchSchema,
  bulkReviewSchema,
  createApiKeyRequestSchema,
  createApiProductSchema,
  deleteRequestQuerySchema,
  mcpGrantListQuerySchema,
  namespaceQuerySchema,
  productListQuerySchema,
  requestListQuerySchema,
  reviewSchema,
  updateApiKeyRequestSchema,
} from './requestSchemas';
import {
  apiKeySchema,
  apiProductSchema,
  mcpGrantSchema,
  readOnlyObjectSchema,
} from './resourceSchemas';
import {
  apiKeyListSchema,
  apiKeySecretSchema,
  apiProductListSchema,
  bulkReviewResponseSchema,
  mcpGrantListSchema,
  readOnlyObjectListSchema,
} from './responseSchemas';

/**
 * One operation of the portal's REST API. `path` is relative to `/api/portal`, with
 * Express-style parameters (`:namespace`, `:name`); `response` is absent for a 204.
 *
 * @public
 */
export interface PortalOperation {
  method: 'get' | 'post' | 'patch' | 'delete';
  path: string;
  /** The request body the router validates (absent: the operation reads none). */
  body?: z.ZodTypeAny;
  /** The query the router validates (lists; a delete's reason). */
  query?: z.ZodTypeAny;
  /** The status of a successful answer. */
  status: 200 | 201 | 204;
  /** The body of a successful answer. */
  response?: z.ZodTypeAny;
}

/**
 * Every operation of the portal's REST API, by operationId.
 *
 * @public
 */
export const portalOperations = {
  listApiProducts: {
    method: 'get',
    path: '/apiproducts',
    query: productListQuerySchema as typeof productListQuerySchema,
    status: 200,
    response: apiProductListSchema as typeof apiProductListSchema,
  },
  getApiProduct: {
    method: 'get',
    path: '/apiproducts/:namespace/:name',
    status: 200,
    response: apiProductSchema as typeof apiProductSchema,
  },
  createApiProduct: {
    method: 'post',
    path: '/apiproducts',
    body: createApiProductSchema as typeof createApiProductSchema,
    status: 201,
    response: apiProductSchema as typeof apiProductSchema,
  },
  updateApiProduct: {
    method: 'patch',
    path: '/apiproducts/:namespace/:name',
    body: apiProductPatchSchema as typeof apiProductPatchSchema,
    status: 200,
    response: apiProductSchema as typeof apiProductSchema,
  },
  deleteApiProduct: { method: 'delete', path: '/apiproducts/:namespace/:name', status: 204 },
  listHttpRoutes: {
    method: 'get',
    path: '/httproutes',
    query: namespaceQuerySchema as typeof namespaceQuerySchema,
    status: 200,
    response: readOnlyObjectListSchema as typeof readOnlyObjectListSchema,
  },
  listPlanPolicies: {
    method: 'get',
    path: '/planpolicies',
    query: namespaceQuerySchema as typeof namespaceQuerySchema,
    status: 200,
    response: readOnlyObjectListSchema as typeof readOnlyObjectListSchema,
  },
  getPlanPolicy: {
    method: 'get',
    path: '/planpolicies/:namespace/:name',
    status: 200,
    response: readOnlyObjectSchema as typeof readOnlyObjectSchema,
  },
  listAuthPolicies: {
    method: 'get',
    path: '/authpolicies',
    query: namespaceQuerySchema as typeof namespaceQuerySchema,
    status: 200,
    response: readOnlyObjectListSchema as typeof readOnlyObjectListSchema,
  },
  listRateLimitPolicies: {
    method: 'get',
    path: '/ratelimitpolicies',
    query: namespaceQuerySchema as typeof namespaceQuerySchema,
    status: 200,
    response: readOnlyObjectListSchema as typeof readOnlyObjectListSchema,
  },
  listRequests: {
    method: 'get',
    path: '/requests',
    query: requestListQuerySchema as typeof requestListQuerySchema,
    status: 200,
    response: apiKeyListSchema as typeof apiKeyListSchema,
  },
  listMyRequests: {
    method: 'get',
    path: '/requests/my',
    query: namespaceQuerySchema as typeof namespaceQuerySchema,
    status: 200,
    response: apiKeyListSchema as typeof apiKeyListSchema,
  },
  createRequest: {
    method: 'post',
    path: '/requests',
    body: createApiKeyRequestSchema as typeof createApiKeyRequestSchema,
    status: 201,
    response: apiKeySchema as typeof apiKeySchema,
  },
  bulkApproveRequests: {
    method: 'post',
    path: '/requests/bulk-approve',
    body: bulkReviewSchema as typeof bulkReviewSchema,
    status: 200,
    response: bulkReviewResponseSchema as typeof bulkReviewResponseSchema,
  },
  bulkRejectRequests: {
    method: 'post',
    path: '/requests/bulk-reject',
    body: bulkReviewSchema as typeof bulkReviewSchema,
    status: 200,
    response: bulkReviewResponseSchema as typeof bulkReviewResponseSchema,
  },
  updateRequest: {
    method: 'patch',
    path: '/requests/:namespace/:name',
    body: updateApiKeyRequestSchema as typeof updateApiKeyRequestSchema,
    status: 200,
    response: apiKeySchema as typeof apiKeySchema,
  },
  deleteRequest: {
    method: 'delete',
    path: '/requests/:namespace/:name',
    query: deleteRequestQuerySchema as typeof deleteRequestQuerySchema,
    status: 204,
  },
  approveRequest: {
    method: 'post',
    path: '/requests/:namespace/:name/approve',
    body: reviewSchema as typeof reviewSchema,
    status: 200,
    response: apiKeySchema as typeof apiKeySchema,
  },
  rejectRequest: {
    method: 'post',
    path: '/requests/:namespace/:name/reject',
    body: reviewSchema as typeof reviewSchema,
    status: 200,
    response: apiKeySchema as typeof apiKeySchema,
  },
  revokeRequest: {
    method: 'post',
    path: '/requests/:namespace/:name/revoke',
    body: reviewSchema as typeof reviewSchema,
    status: 204,
  },
  revealApiKeySecret: {
    method: 'get',
    path: '/apikeys/:namespace/:name/secret',
    status: 200,
    response: apiKeySecretSchema as typeof apiKeySecretSchema,
  },
  listMcpGrants: {
    method: 'get',
    path: '/mcp/grants',
    query: mcpGrantListQuerySchema as typeof mcpGrantListQuerySchema,
    status: 200,
    response: mcpGrantListSchema as typeof mcpGrantListSchema,
  },
  getMcpGrant: {
    method: 'get',
    path: '/mcp/grants/:namespace/:name',
    status: 200,
    response: mcpGrantSchema as typeof mcpGrantSchema,
  },
} as const satisfies Record<string, PortalOperation>;

/** The operation ids of {@link portalOperations}. @public */
export type PortalOperationId = keyof typeof portalOperations;

/** What a client sends as the body of an operation (`never`: it reads none). @public */
export type PortalOperationBody<K extends PortalOperationId> =
  (typeof portalOperations)[K] extends { body: infer S extends z.ZodTypeAny } ? z.input<S> : never;

/** The query an operation understands (`never`: it reads none). @public */
export type PortalOperationQuery<K extends PortalOperationId> =
  (typeof portalOperations)[K] extends { query: infer S extends z.ZodTypeAny }
    ? z.output<S>
    : never;

/** The body of an operation's successful answer (`void` for a 204). @public */
export type PortalOperationResponse<K extends PortalOperationId> =
  (typeof portalOperations)[K] extends { response: infer S extends z.ZodTypeAny }
    ? z.output<S>
    : void;
