/*
 * The plans of a new MCP product as the plan editor holds them (strings as typed) and their
 * translation into `spec.plans` (contract mcp-access §3.2), with what a person must fix first.
 * The server checks everything again (tiers unique, quotas not repeated, at most 20 plans and 10
 * quotas each).
 */
import type { ApiProduct } from '@devportal/plugin-portal-common';
import { nameProblem } from './productFields';

/** A plan of an MCP product. */
type McpPlan = NonNullable<ApiProduct['spec']['plans']>[number];

/** The fixed window of a quota. */
export type QuotaWindow = 'minute' | 'hour' | 'day';

/** One quota row as typed: calls, window, and tool globs separated by commas (empty: all tools). */
export interface QuotaDraft {
  calls: string;
  per: QuotaWindow;
  tools: string;
}

/** One plan as typed. */
export interface PlanDraft {
  tier: string;
  description: string;
  quotas: QuotaDraft[];
}

/** The most plans and quotas per plan the API takes. */
export const MAX_PLANS = 20;
export const MAX_QUOTAS = 10;

/** A new quota row: 100 calls a day on every tool. */
export const NEW_QUOTA: QuotaDraft = { calls: '100', per: 'day', tools: '' };

/** A new plan's draft. */
export function newPlan(tier = ''): PlanDraft {
  return { tier, description: '', quotas: [{ ...NEW_QUOTA }] };
}

/** Why a typed call count is not one (an integer from 1), or undefined. */
export function callsProblem(calls: string): string | undefined {
  return /^[1-9]\d{0,9}$/.test(calls.trim()) && Number(calls) <= 1_000_000_000
    ? undefined
    : 'A whole number from 1 to 1,000,000,000';
}

/** What must be fixed before the plans can be sent; undefined when nothing. */
export function planDraftsProblem(drafts: PlanDraft[]): string | undefined {
  if (drafts.length === 0) return 'An MCP product needs at least one plan';
  const tiers = new Set<string>();
  for (const [i, draft] of drafts.entries()) {
    const tier = draft.tier.trim();
    const problem = nameProblem(tier);
    if (problem !== undefined) return `Plan ${i + 1}: tier: ${problem}`;
    if (tiers.has(tier)) return `Plan ${i + 1}: tier "${tier}" is already used`;
    tiers.add(tier);
    for (const [j, quota] of draft.quotas.entries()) {
      const calls = callsProblem(quota.calls);
      if (calls !== undefined) return `Plan ${i + 1}, quota ${j + 1}: calls: ${calls}`;
    }
  }
  return undefined;
}

/** `spec.plans` of the drafts (check {@link planDraftsProblem} first). */
export function plansOf(drafts: PlanDraft[]): McpPlan[] {
  return drafts.map(draft => {
    const description = draft.description.trim();
    return {
      tier: draft.tier.trim(),
      ...(description !== '' && { description }),
      limits: {
        toolCalls: draft.quotas.map(quota => {
          const tools = quota.tools
            .split(',')
            .map(tool => tool.trim())
            .filter(tool => tool !== '');
          return {
            calls: Number(quota.calls.trim()),
            per: quota.per,
            ...(tools.length > 0 && { tools }),
          };
        }),
      },
    };
  });
}

/** The drafts of saved plans (the editor's starting point when a product is edited). */
export function draftsOf(plans: readonly McpPlan[]): PlanDraft[] {
  return plans.map(plan => ({
    tier: plan.tier,
    description: plan.description ?? '',
    quotas: plan.limits.toolCalls.map(limit => ({
      calls: String(limit.calls),
      per: limit.per,
      tools: (limit.tools ?? []).join(', '),
    })),
  }));
}
