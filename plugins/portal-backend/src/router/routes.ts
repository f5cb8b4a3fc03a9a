/**
 * The portal's route table (spec §4): one entry per endpoint. The router binds a handler
 * to each entry by `operationId`, the OpenAPI document must list exactly these
 * operations, and the route × principal test matrix is built from this table, so a new
 * route cannot skip any of them.
 *
 * @public
 */
export const portalRoutes = [
  { operationId: 'listApiProducts', method: 'get', path: '/apiproducts' },
  {
    operationId: 'getApiProduct',
    method: 'get',
    path: '/apiproducts/:namespace/:name',
  },
  { operationId: 'createApiProduct', method: 'post', path: '/apiproducts' },
  {
    operationId: 'updateApiProduct',
    method: 'patch',
    path: '/apiproducts/:namespace/:name',
  },
  {
    operationId: 'deleteApiProduct',
    method: 'delete',
    path: '/apiproducts/:namespace/:name',
  },
  { operationId: 'listHttpRoutes', method: 'get', path: '/httproutes' },
  { operationId: 'listPlanPolicies', method: 'get', path: '/planpolicies' },
  {
    operationId: 'getPlanPolicy',
    method: 'get',
    path: '/planpolicies/:namespace/:name',
  },
  { operationId: 'listAuthPolicies', method: 'get', path: '/authpolicies' },
  {
    operationId: 'listRateLimitPolicies',
    method: 'get',
    path: '/ratelimitpolicies',
  },
  { operationId: 'listRequests', method: 'get', path: '/requests' },
  { operationId: 'listMyRequests', method: 'get', path: '/requests/my' },
  { operationId: 'createRequest', method: 'post', path: '/requests' },
  {
    operationId: 'bulkApproveRequests',
    method: 'post',
    path: '/requests/bulk-approve',
  },
  {
    operationId: 'bulkRejectRequests',
    method: 'post',
    path: '/requests/bulk-reject',
  },
  {
    operationId: 'updateRequest',
    method: 'patch',
    path: '/requests/:namespace/:name',
  },
  {
    operationId: 'deleteRequest',
    method: 'delete',
    path: '/requests/:namespace/:name',
  },
  {
    operationId: 'approveRequest',
    method: 'post',
    path: '/requests/:namespace/:name/approve',
  },
  {
    operationId: 'rejectRequest',
    method: 'post',
    path: '/requests/:namespace/:name/reject',
  },
  {
    operationId: 'revealApiKeySecret',
    method: 'get',
    path: '/apikeys/:namespace/:name/secret',
  },
] as const;

/**
 * One entry of {@link portalRoutes}.
 *
 * @public
 */
export type PortalRoute = (typeof portalRoutes)[number];

/**
 * The operation ids of {@link portalRoutes}.
 *
 * @public
 */
export type PortalOperationId = PortalRoute['operationId'];

/**
 * `/apiproducts/:namespace/:name` → `/apiproducts/{namespace}/{name}` (OpenAPI form).
 *
 * @public
 */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z]+)/g, '{$1}');
}
