/*
 * The plan tiers a patch of an MCP product drops (removes or renames). Contract mcp-access
 * §3.3 refuses the patch with 409 when live access grants use one of them, since the broker
 * would then hold grants whose plan no longer exists; the store checks that in the same
 * atomic step as the write (`PortalStore.replaceProduct`'s `unused` condition).
 */
import { type ApiProductSpec, isMcpTarget } from '@devportal/plugin-portal-common';

/** The tiers of `current` that `next` no longer has; none unless the product is an MCP one. */
export function removedPlanTiers(
  current: Pick<ApiProductSpec, 'targetRef' | 'plans'>,
  next: Pick<ApiProductSpec, 'plans'>,
): string[] {
  if (!isMcpTarget(current.targetRef)) return [];
  const kept = new Set((next.plans ?? []).map(plan => plan.tier));
  return (current.plans ?? []).map(plan => plan.tier).filter(tier => !kept.has(tier));
}
