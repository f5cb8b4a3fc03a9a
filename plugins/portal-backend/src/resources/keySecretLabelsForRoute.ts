import type { ReadOnlyObject } from '@devportal/plugin-portal-common';
import type { ReadOnlyResourceSource } from '../store/types';
import { authPolicySpecSchema } from './manifestSchema';
import { targetsHttpRoute } from './plansForRoute';

/**
 * The label Authorino selects the Secrets it watches by (its default
 * `--secret-label-selector`, which Kuadrant's Authorino uses).
 */
export const AUTHORINO_SECRET_LABEL = 'authorino.kuadrant.io/managed-by';
/** Value of {@link AUTHORINO_SECRET_LABEL}. */
export const AUTHORINO_SECRET_LABEL_VALUE = 'authorino';

/**
 * The labels an API key Secret needs so that the gateway accepts the key on the
 * HTTPRoute `namespace/routeName`, derived from the AuthPolicies in `policies`:
 *
 * - every AuthPolicy in `namespace` whose `spec.targetRef` is that HTTPRoute (group,
 *   when given, the Gateway API's) counts; policies targeting a Gateway, another route
 *   or living in another namespace do not;
 * - of each, every apiKey rule under `spec.rules.authentication` adds its
 *   `selector.matchLabels` (Authorino accepts a key from a Secret that matches the
 *   rule's selector);
 * - `authorino.kuadrant.io/managed-by: authorino` is added when at least one apiKey
 *   rule exists, as Authorino only watches Secrets carrying it (a policy that names
 *   another value for it wins, for an Authorino started with another selector).
 *
 * Conflicts: policies are taken in name order and, within one, rules in name order;
 * when two set the same label to different values, the first wins (the key then
 * satisfies the first rule's selector only).
 *
 * Not supported (documented limits): `selector.matchExpressions` (ignored, so a rule
 * selecting by expressions only adds nothing), and rules under `spec.defaults` /
 * `spec.overrides` or in policies attached to the route's Gateway — only `spec.rules`
 * of route-targeted policies is read. Policies whose spec does not have the expected
 * shape (including matchLabels that are not valid Kubernetes labels) are skipped.
 *
 * An empty object means the route has no apiKey authentication.
 */
export function keySecretLabelsOfPolicies(
  policies: ReadOnlyObject[],
  namespace: string,
  routeName: string,
): Record<string, string> {
  const labels: Record<string, string> = {};
  let apiKeyRules = 0;
  const candidates = policies
    .filter(p => p.kind === 'AuthPolicy' && p.metadata.namespace === namespace)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  for (const policy of candidates) {
    const spec = authPolicySpecSchema.safeParse(policy.spec);
    if (!spec.success || !targetsHttpRoute(spec.data.targetRef, routeName)) {
      continue;
    }
    const rules = Object.entries(spec.data.rules?.authentication ?? {}).sort(([a], [b]) =>
      a.localeCompare(b),
    );
    for (const [, rule] of rules) {
      if (rule.apiKey === undefined) {
        continue;
      }
      apiKeyRules++;
      for (const [key, value] of Object.entries(rule.apiKey.selector.matchLabels ?? {})) {
        if (!Object.prototype.hasOwnProperty.call(labels, key)) {
          labels[key] = value;
        }
      }
    }
  }
  if (apiKeyRules > 0 && labels[AUTHORINO_SECRET_LABEL] === undefined) {
    labels[AUTHORINO_SECRET_LABEL] = AUTHORINO_SECRET_LABEL_VALUE;
  }
  return labels;
}

/**
 * The labels an API key Secret for a product on the HTTPRoute `namespace/routeName`
 * needs, from the AuthPolicies of `source`; see {@link keySecretLabelsOfPolicies}.
 */
export async function keySecretLabelsForRoute(
  source: ReadOnlyResourceSource,
  namespace: string,
  routeName: string,
): Promise<Record<string, string>> {
  const policies = await source.list('AuthPolicy', { namespace });
  return keySecretLabelsOfPolicies(policies, namespace, routeName);
}
