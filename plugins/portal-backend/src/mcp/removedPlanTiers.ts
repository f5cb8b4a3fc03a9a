/*
 * The 409 of contract mcp-access §3.3: a patch may not remove (or rename) a plan tier of an
 * MCP product that live access grants use, since the broker would then hold grants whose plan
 * no longer exists. The count is the store's (`countLiveGrants`), one per removed tier.
 *
 * This is a check before the write, not a compare-and-set: a request approved between the
 * count and the write keeps its tier name with no plan, and gets no quota beyond the admin's
 * rate limits until the product is patched again (the grant list then says `toolCalls: []`).
 */
import { ConflictError } from '@backstage/errors';
import { type ApiProductSpec, isMcpTarget, type ObjectRef } from '@devportal/plugin-portal-common';
import type { PortalStore } from '../store/types';

/** ConflictError naming the first removed tier that live grants of `product` use. */
export async function assertRemovedTiersUnused(
  store: Pick<PortalStore, 'countLiveGrants'>,
  product: ObjectRef,
  current: Pick<ApiProductSpec, 'targetRef' | 'plans'>,
  next: Pick<ApiProductSpec, 'plans'>,
  now: Date,
): Promise<void> {
  if (!isMcpTarget(current.targetRef)) return;
  const kept = new Set((next.plans ?? []).map(plan => plan.tier));
  for (const { tier } of current.plans ?? []) {
    if (kept.has(tier)) continue;
    const count = await store.countLiveGrants(product, tier, now);
    if (count > 0) {
      throw new ConflictError(
        `plan "${tier}" is used by ${count} live access grant${count === 1 ? '' : 's'}; revoke them or keep the plan`,
      );
    }
  }
}
