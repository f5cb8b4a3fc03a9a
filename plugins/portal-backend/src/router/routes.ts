/**
 * The portal's route table (spec §4): one entry per operation of the contract
 * (`portalOperations` in @devportal/plugin-portal-common, where the client takes its calls
 * from too). The router binds a handler to each entry by `operationId`, the OpenAPI document
 * must list exactly these operations, and the route × principal test matrix is built from
 * this table, so a new route cannot skip any of them.
 */
import { portalOperations, type PortalOperationId } from '@devportal/plugin-portal-common';

export type { PortalOperationId };

/**
 * One entry of {@link portalRoutes}.
 *
 * @public
 */
export type PortalRoute = {
  [K in PortalOperationId]: {
    operationId: K;
    method: (typeof portalOperations)[K]['method'];
    path: (typeof portalOperations)[K]['path'];
  };
}[PortalOperationId];

/**
 * Method and path of every operation, in the order the router registers them.
 *
 * @public
 */
export const portalRoutes: readonly PortalRoute[] = (
  Object.keys(portalOperations) as PortalOperationId[]
).map(
  operationId =>
    ({
      operationId,
      method: portalOperations[operationId].method,
      path: portalOperations[operationId].path,
    }) as PortalRoute,
);

/**
 * `/apiproducts/:namespace/:name` → `/apiproducts/{namespace}/{name}` (OpenAPI form).
 *
 * @public
 */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z]+)/g, '{$1}');
}
