import type { Plan, ReadOnlyObject } from '@devportal/plugin-portal-common';
import type { ReadOnlyResourceSource } from '../store/types';
import { planPolicySpecSchema } from './manifestSchema';

const GATEWAY_API_GROUP = 'gateway.networking.k8s.io';

/**
 * Whether a policy's `spec.targetRef` is the HTTPRoute `routeName` (of the policy's own
 * namespace; a group, when given, must be the Gateway API's).
 */
export function targetsHttpRoute(
  targetRef: { group?: string; kind: string; name: string },
  routeName: string,
): boolean {
  return (
    targetRef.kind === 'HTTPRoute' &&
    targetRef.name === routeName &&
    (targetRef.group === undefined || targetRef.group === GATEWAY_API_GROUP)
  );
}

/**
 * The plans that `policies` offer on the HTTPRoute `namespace/routeName`: those of every
 * PlanPolicy in that namespace whose `spec.targetRef` names the route (group, when
 * given, must be the Gateway API's). Policies are taken in name order and a tier offered
 * twice is listed once (the first wins), so a product's `status.plans` is stable.
 * Policies whose spec is not a valid PlanPolicy spec are ignored.
 */
export function plansOfPolicies(
  policies: ReadOnlyObject[],
  namespace: string,
  routeName: string,
): Plan[] {
  const plans: Plan[] = [];
  const seen = new Set<string>();
  const targeting = policies
    .filter(p => p.kind === 'PlanPolicy' && p.metadata.namespace === namespace)
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  for (const policy of targeting) {
    const spec = planPolicySpecSchema.safeParse(policy.spec);
    if (!spec.success) {
      continue;
    }
    if (!targetsHttpRoute(spec.data.targetRef, routeName)) {
      continue;
    }
    for (const plan of spec.data.plans) {
      if (!seen.has(plan.tier)) {
        seen.add(plan.tier);
        plans.push({
          tier: plan.tier,
          ...(plan.description !== undefined && { description: plan.description }),
          ...(plan.limits !== undefined && { limits: plan.limits }),
        });
      }
    }
  }
  return plans;
}

/**
 * The plans offered on the HTTPRoute `namespace/routeName` by the PlanPolicies of
 * `source` (a product's `status.plans`, and the tiers a key request may ask for).
 * An empty list means the route has no plans.
 */
export async function plansForRoute(
  source: ReadOnlyResourceSource,
  namespace: string,
  routeName: string,
): Promise<Plan[]> {
  const policies = await source.list('PlanPolicy', { namespace });
  return plansOfPolicies(policies, namespace, routeName);
}
