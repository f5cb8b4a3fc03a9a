/*
 * The rules an MCP product adds to a product (contract mcp-access §3.2–§3.4), as plain
 * functions DefaultPortalService calls after schema validation:
 * - an MCP product carries its plans (tool-call quotas); an HTTPRoute product takes its plans
 *   from the PlanPolicies of its route and must not carry any;
 * - tiers are unique, and no two quotas of one plan count the same window over the same tools;
 * - an MCP product's target never changes (grants name their target), nor does a product
 *   turn from one kind into the other;
 * - its owner is its server's owner.
 * Each refusal is an InputError naming the field and what to do.
 */
import { InputError } from '@backstage/errors';
import {
  type ApiProductSpec,
  describeMcpTarget,
  isMcpTarget,
  type McpTarget,
  mcpTargetKey,
  type Plan,
} from '@devportal/plugin-portal-common';

/** Refuses plans on an HTTPRoute product, a missing plan list on an MCP one, and repeats. */
export function assertPlansFitTarget(spec: Pick<ApiProductSpec, 'targetRef' | 'plans'>): void {
  if (!isMcpTarget(spec.targetRef)) {
    if (spec.plans !== undefined) {
      throw new InputError(
        'spec.plans: an HTTPRoute product takes its plans from the PlanPolicies of its route; remove spec.plans',
      );
    }
    return;
  }
  const plans = spec.plans ?? [];
  if (plans.length === 0) {
    throw new InputError('spec.plans: an MCP product needs at least one plan');
  }
  const tierIndex = new Map<string, number>();
  plans.forEach((plan, index) => {
    const earlier = tierIndex.get(plan.tier);
    if (earlier !== undefined) {
      throw new InputError(
        `spec.plans[${earlier}] and spec.plans[${index}] both have tier "${plan.tier}"; tiers must be unique`,
      );
    }
    tierIndex.set(plan.tier, index);
    const windowIndex = new Map<string, number>();
    plan.limits.toolCalls.forEach((limit, limitIndex) => {
      const scope = `${limit.per} ${JSON.stringify([...new Set(limit.tools ?? [])].sort())}`;
      const same = windowIndex.get(scope);
      if (same !== undefined) {
        throw new InputError(
          `spec.plans[${index}].limits.toolCalls[${same}] and [${limitIndex}] count the same tools per ${limit.per}; merge them into one entry`,
        );
      }
      windowIndex.set(scope, limitIndex);
    });
  });
}

/** Refuses a patch that changes an MCP product's target or the kind of a product's target. */
export function assertTargetKept(
  current: Pick<ApiProductSpec, 'targetRef'>,
  next: Pick<ApiProductSpec, 'targetRef'>,
): void {
  const was = current.targetRef;
  const is = next.targetRef;
  if (isMcpTarget(was) || isMcpTarget(is)) {
    if (mcpTargetKey(was) !== mcpTargetKey(is)) {
      throw new InputError(
        'spec.targetRef of an MCP product cannot change, nor can a product become one; create another product',
      );
    }
  }
}

/**
 * The owner annotation of a new MCP product: its server's owner. A body may name that owner
 * (any spelling of the same ref), or none; another owner is refused.
 */
export function ownerOfMcpProduct(
  target: McpTarget,
  serverOwner: string,
  requestedOwner: string | undefined,
): string {
  if (requestedOwner !== undefined && requestedOwner !== serverOwner) {
    throw new InputError(
      `the owner of an MCP product is its server's owner (${serverOwner}); remove the owner annotation or name ${serverOwner} (${describeMcpTarget(target)})`,
    );
  }
  return serverOwner;
}

/** `status.plans` of an MCP product: its `spec.plans`, in the one plan shape of every product. */
export function plansOfMcpProduct(spec: Pick<ApiProductSpec, 'plans'>): Plan[] {
  return (spec.plans ?? []).map(plan => ({
    tier: plan.tier,
    ...(plan.description !== undefined && { description: plan.description }),
    limits: { toolCalls: plan.limits.toolCalls },
  }));
}
