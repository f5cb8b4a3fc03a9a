/*
 * Test helper: the conditional decision a policy gives an API owner for
 * `portal.apikey.approve` (the IS_PRODUCT_OWNER rule over the caller's ownership refs).
 */
import { AuthorizeResult, type PolicyDecision } from '@backstage/plugin-permission-common';

/** A CONDITIONAL approval: keys whose product is owned by one of `claims`. */
export function productOwnerApproval(claims: string[]): PolicyDecision {
  return {
    result: AuthorizeResult.CONDITIONAL,
    pluginId: 'portal',
    resourceType: 'portal-apikey',
    conditions: {
      rule: 'IS_PRODUCT_OWNER',
      resourceType: 'portal-apikey',
      params: { claims },
    },
  };
}
