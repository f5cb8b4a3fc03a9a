import { createPermission } from '@backstage/plugin-permission-common';

/**
 * Resource type of API key requests (`APIKey` records), used by the conditional
 * `portal.apikey.approve` permission and its `IS_PRODUCT_OWNER` rule.
 *
 * @public
 */
export const PORTAL_APIKEY_RESOURCE_TYPE = 'portal-apikey';

/**
 * Resource type of API products (`APIProduct` records).
 *
 * @public
 */
export const PORTAL_APIPRODUCT_RESOURCE_TYPE = 'portal-apiproduct';

/** List API products (and the HTTPRoutes they can target). @public */
export const portalApiProductListPermission = createPermission({
  name: 'portal.apiproduct.list',
  attributes: { action: 'read' },
});
/** Create an API product. @public */
export const portalApiProductCreatePermission = createPermission({
  name: 'portal.apiproduct.create',
  attributes: { action: 'create' },
});
/** Read API products the caller owns. @public */
export const portalApiProductReadOwnPermission = createPermission({
  name: 'portal.apiproduct.read.own',
  attributes: { action: 'read' },
});
/** Read any API product. @public */
export const portalApiProductReadAllPermission = createPermission({
  name: 'portal.apiproduct.read.all',
  attributes: { action: 'read' },
});
/** Update API products the caller owns (not their route or owner). @public */
export const portalApiProductUpdateOwnPermission = createPermission({
  name: 'portal.apiproduct.update.own',
  attributes: { action: 'update' },
});
/** Update any API product, including its route and owner. @public */
export const portalApiProductUpdateAllPermission = createPermission({
  name: 'portal.apiproduct.update.all',
  attributes: { action: 'update' },
});
/** Delete API products the caller owns (with their keys). @public */
export const portalApiProductDeleteOwnPermission = createPermission({
  name: 'portal.apiproduct.delete.own',
  attributes: { action: 'delete' },
});
/** Delete any API product (with its keys). @public */
export const portalApiProductDeleteAllPermission = createPermission({
  name: 'portal.apiproduct.delete.all',
  attributes: { action: 'delete' },
});

/** List PlanPolicies. @public */
export const portalPlanPolicyListPermission = createPermission({
  name: 'portal.planpolicy.list',
  attributes: { action: 'read' },
});
/** Read one PlanPolicy. @public */
export const portalPlanPolicyReadPermission = createPermission({
  name: 'portal.planpolicy.read',
  attributes: { action: 'read' },
});
/** List AuthPolicies. @public */
export const portalAuthPolicyListPermission = createPermission({
  name: 'portal.authpolicy.list',
  attributes: { action: 'read' },
});
/** List RateLimitPolicies. @public */
export const portalRateLimitPolicyListPermission = createPermission({
  name: 'portal.ratelimitpolicy.list',
  attributes: { action: 'read' },
});

/** Request an API key. @public */
export const portalApiKeyCreatePermission = createPermission({
  name: 'portal.apikey.create',
  attributes: { action: 'create' },
});
/** Read API key requests the caller owns (as requester or product owner). @public */
export const portalApiKeyReadOwnPermission = createPermission({
  name: 'portal.apikey.read.own',
  attributes: { action: 'read' },
});
/** Read any API key request. @public */
export const portalApiKeyReadAllPermission = createPermission({
  name: 'portal.apikey.read.all',
  attributes: { action: 'read' },
});
/** Edit the caller's own pending requests. @public */
export const portalApiKeyUpdateOwnPermission = createPermission({
  name: 'portal.apikey.update.own',
  attributes: { action: 'update' },
});
/** Edit any pending request. @public */
export const portalApiKeyUpdateAllPermission = createPermission({
  name: 'portal.apikey.update.all',
  attributes: { action: 'update' },
});
/** Delete (and so revoke) the caller's own requests. @public */
export const portalApiKeyDeleteOwnPermission = createPermission({
  name: 'portal.apikey.delete.own',
  attributes: { action: 'delete' },
});
/** Delete (and so revoke) any request. @public */
export const portalApiKeyDeleteAllPermission = createPermission({
  name: 'portal.apikey.delete.all',
  attributes: { action: 'delete' },
});
/**
 * Approve or reject API key requests. A resource permission on
 * {@link PORTAL_APIKEY_RESOURCE_TYPE}, so policies can make it conditional on the
 * `IS_PRODUCT_OWNER` rule.
 *
 * @public
 */
export const portalApiKeyApprovePermission = createPermission({
  name: 'portal.apikey.approve',
  attributes: { action: 'update' },
  resourceType: PORTAL_APIKEY_RESOURCE_TYPE,
});

/**
 * Read the live access grants of MCP products (`GET /mcp/grants`): what the MCP broker's
 * portal module reads (contract mcp-access §4.8). Service principals pass unless restricted.
 * @public
 */
export const portalMcpGrantListPermission = createPermission({
  name: 'portal.mcpgrant.list',
  attributes: { action: 'read' },
});

/**
 * Every `portal.*` permission, in the order the spec lists them.
 *
 * @public
 */
export const portalPermissions = [
  portalApiProductListPermission,
  portalApiProductCreatePermission,
  portalApiProductReadOwnPermission,
  portalApiProductReadAllPermission,
  portalApiProductUpdateOwnPermission,
  portalApiProductUpdateAllPermission,
  portalApiProductDeleteOwnPermission,
  portalApiProductDeleteAllPermission,
  portalPlanPolicyListPermission,
  portalPlanPolicyReadPermission,
  portalAuthPolicyListPermission,
  portalRateLimitPolicyListPermission,
  portalApiKeyCreatePermission,
  portalApiKeyReadOwnPermission,
  portalApiKeyReadAllPermission,
  portalApiKeyUpdateOwnPermission,
  portalApiKeyUpdateAllPermission,
  portalApiKeyDeleteOwnPermission,
  portalApiKeyDeleteAllPermission,
  portalApiKeyApprovePermission,
  portalMcpGrantListPermission,
];
