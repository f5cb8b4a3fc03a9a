/*
 * The two refusals that keep an MCP product's plans and its live grants consistent (contract
 * mcp-access §3.3): a replace may not drop a tier that live grants use, and an approval may not
 * grant a tier the product no longer offers. Each store decides when; the wording is one.
 */
import { ConflictError } from '@backstage/errors';
import type { ApiProductSpec, ObjectRef } from '@devportal/plugin-portal-common';
import { refText } from './productOwner';

/** The plan tiers a product's spec offers itself (an MCP product's plans; none otherwise). */
export function offeredTiers(spec: Pick<ApiProductSpec, 'plans'>): string[] {
  return (spec.plans ?? []).map(plan => plan.tier);
}

/** ConflictError: `count` live grants use `tier`, which a replace would drop. */
export function tierInUseError(tier: string, count: number): ConflictError {
  return new ConflictError(
    `plan "${tier}" is used by ${count} live access grant${count === 1 ? '' : 's'}; revoke them or keep the plan`,
  );
}

/** ConflictError: the product of an access request no longer offers its tier. */
export function tierNotOfferedError(product: ObjectRef, tier: string): ConflictError {
  return new ConflictError(
    `API product ${refText(product)} no longer offers plan "${tier}": the request cannot be approved; reject it, or ask the requester for another plan`,
  );
}
