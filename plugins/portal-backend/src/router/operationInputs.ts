/*
 * What the router validates, per operation: the zod schema of its request body and of its
 * query. The router takes its schemas from this table, and openapi.yaml's request schemas
 * are generated from it (__testUtils__/openapiSchemas.ts, `yarn build:openapi`), so the document and
 * the validation cannot drift: the OpenAPI test regenerates them and compares.
 */
import type { z } from 'zod';
import type { PortalOperationId } from './routes';
import {
  apiProductPatchSchema,
  bulkReviewSchema,
  createApiKeyRequestSchema,
  createApiProductSchema,
  namespaceQuerySchema,
  requestListQuerySchema,
  reviewSchema,
  updateApiKeyRequestSchema,
} from './schemas';

/** The inputs an operation validates (path parameters are plain strings). */
export interface OperationInput {
  body?: z.ZodTypeAny;
  query?: typeof namespaceQuerySchema | typeof requestListQuerySchema;
}

/** The validated inputs of every operation of {@link portalRoutes}. */
export const operationInputs = {
  listApiProducts: { query: namespaceQuerySchema },
  getApiProduct: {},
  createApiProduct: { body: createApiProductSchema },
  updateApiProduct: { body: apiProductPatchSchema },
  deleteApiProduct: {},
  listHttpRoutes: { query: namespaceQuerySchema },
  listPlanPolicies: { query: namespaceQuerySchema },
  getPlanPolicy: {},
  listAuthPolicies: { query: namespaceQuerySchema },
  listRateLimitPolicies: { query: namespaceQuerySchema },
  listRequests: { query: requestListQuerySchema },
  listMyRequests: { query: namespaceQuerySchema },
  createRequest: { body: createApiKeyRequestSchema },
  bulkApproveRequests: { body: bulkReviewSchema },
  bulkRejectRequests: { body: bulkReviewSchema },
  updateRequest: { body: updateApiKeyRequestSchema },
  deleteRequest: {},
  approveRequest: { body: reviewSchema },
  rejectRequest: { body: reviewSchema },
  revealApiKeySecret: {},
} as const satisfies Record<PortalOperationId, OperationInput>;
