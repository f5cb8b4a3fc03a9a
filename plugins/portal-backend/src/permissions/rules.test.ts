import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import type { ApiKey } from '@devportal/plugin-portal-common';
import { isProductOwnerRule, portalApiKeyRules, type PortalApiKeyResource } from './rules';
import { productOwnerApproval } from './testing';

const key = { metadata: { namespace: 'toystore', name: 'k' } } as ApiKey;
const resource = (productOwnerRef?: string): PortalApiKeyResource => ({
  apiKey: key,
  productOwnerRef,
});
const authorize = createConditionAuthorizer<PortalApiKeyResource, unknown>(portalApiKeyRules);
const conditional = productOwnerApproval;

describe('IS_PRODUCT_OWNER', () => {
  it('holds when the product owner is one of the claims (as RBAC passes $ownerRefs)', () => {
    const decision = conditional(['user:default/bob', 'group:default/payments-team']);
    expect(authorize(decision, resource('group:default/payments-team'))).toBe(true);
    expect(authorize(decision, resource('user:default/bob'))).toBe(true);
    expect(authorize(decision, resource('user:default/carol'))).toBe(false);
    expect(authorize(decision, resource(undefined))).toBe(false);
  });

  it('compares entity refs case-insensitively, like the catalog', () => {
    expect(
      isProductOwnerRule.apply(resource('group:default/Payments-Team'), {
        claims: ['group:default/payments-team'],
      }),
    ).toBe(true);
  });

  it('accepts only {claims: string[]} as parameters and describes them as JSON Schema', () => {
    const standard = (isProductOwnerRule.paramsSchema as any)['~standard'];
    expect(standard.validate({ claims: ['user:default/bob'] }).issues).toBeUndefined();
    expect(standard.validate({ claims: 'user:default/bob' }).issues).toHaveLength(1);
    expect(standard.validate({ claims: [], extra: 1 }).issues).toHaveLength(1);
    expect(standard.jsonSchema.input({ target: 'draft-07' })).toMatchObject({
      required: ['claims'],
    });
  });
});
