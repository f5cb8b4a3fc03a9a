/*
 * The `portal-apikey` permission resource and its one rule, IS_PRODUCT_OWNER, which lets a
 * policy grant `portal.apikey.approve` to the owners of the key's product only (spec §7).
 *
 * Decisions are applied here, in the plugin: the service asks for a conditional decision
 * once per request and applies its conditions to each key with `apply` (see
 * AuthorizedPortalService), so a bulk call decides every item on its own without one
 * permission round trip per item.
 */
import {
  createPermissionResourceRef,
  createPermissionRule,
} from '@backstage/plugin-permission-node';
import type { ApiKey } from '@devportal/plugin-portal-common';
import { PORTAL_APIKEY_RESOURCE_TYPE } from '@devportal/plugin-portal-common';

/**
 * An API key as the permission framework sees it: the key plus the owner of its product
 * (undefined when the product is gone).
 *
 * @public
 */
export interface PortalApiKeyResource {
  apiKey: ApiKey;
  productOwnerRef: string | undefined;
}

/**
 * A query form of the rules (what `toQuery` produces): the product owner refs a key's
 * product must have. The portal never lists keys by this permission, but the framework
 * requires every rule to have one.
 *
 * @public
 */
export interface PortalApiKeyQuery {
  productOwnerRefs: string[];
}

/**
 * Reference of the `portal-apikey` resource type of plugin `portal`.
 *
 * @public
 */
export const portalApiKeyResourceRef = createPermissionResourceRef<
  PortalApiKeyResource,
  PortalApiKeyQuery
>().with({ pluginId: 'portal', resourceType: PORTAL_APIKEY_RESOURCE_TYPE });

/** Parameters of {@link isProductOwnerRule}. @public */
export type IsProductOwnerParams = {
  /** Entity refs of the caller (user and groups); one must own the key's product. */
  claims: string[];
};

const CLAIMS_JSON_SCHEMA = {
  type: 'object',
  properties: {
    claims: {
      type: 'array',
      items: { type: 'string' },
      description: 'Entity refs of the caller (user and groups); one must own the product',
    },
  },
  required: ['claims'],
  additionalProperties: false,
};

/**
 * The rule's parameter schema as a Standard (JSON) Schema. Hand-written because the
 * permission framework's types expect zod 4 (or zod/v3 of its own copy), while this
 * package uses zod 3; a structural schema avoids mixing the two.
 */
const claimsSchema = {
  '~standard': {
    version: 1,
    vendor: 'devportal',
    validate(value: unknown) {
      const claims = (value as { claims?: unknown } | null)?.claims;
      const valid =
        typeof value === 'object' &&
        value !== null &&
        Object.keys(value).every(key => key === 'claims') &&
        Array.isArray(claims) &&
        claims.every(claim => typeof claim === 'string');
      return valid
        ? { value: value as IsProductOwnerParams }
        : {
            issues: [{ message: 'expected {claims: string[]} (entity refs)' }],
          };
    },
    jsonSchema: {
      input: () => CLAIMS_JSON_SCHEMA,
      output: () => CLAIMS_JSON_SCHEMA,
    },
  },
} as const;

/**
 * `IS_PRODUCT_OWNER`: holds when the owner of the key's product is one of `claims`
 * (policies pass the caller's ownership refs, e.g. `claims: [$ownerRefs]` in RBAC).
 *
 * @public
 */
export const isProductOwnerRule = createPermissionRule<
  typeof portalApiKeyResourceRef,
  IsProductOwnerParams
>({
  name: 'IS_PRODUCT_OWNER',
  description:
    "Allow when the owner of the API key's product is one of the given claims (entity refs)",
  resourceRef: portalApiKeyResourceRef,
  paramsSchema: claimsSchema,
  apply: (resource, { claims }) =>
    resource.productOwnerRef !== undefined &&
    claims.some(
      claim =>
        claim.toLocaleLowerCase('en-US') === resource.productOwnerRef!.toLocaleLowerCase('en-US'),
    ),
  toQuery: ({ claims }) => ({ productOwnerRefs: claims }),
});

/** Every rule of the `portal-apikey` resource type. @public */
export const portalApiKeyRules = [isProductOwnerRule];
