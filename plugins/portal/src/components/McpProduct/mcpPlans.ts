/*
 * The plans of an MCP product (its `spec.plans`, contract mcp-access §3.2) as its pages read
 * them: each tier's tool-call quotas in words, and which tool globs of a quota match none of
 * the tools the server lists now (allowed, since tools come and go, but worth saying).
 */
import {
  describeToolCallLimit,
  isMcpTarget,
  type ApiProduct,
  type Plan,
} from '@devportal/plugin-portal-common';

/** A plan of an MCP product. */
export type McpPlan = NonNullable<ApiProduct['spec']['plans']>[number];

/** One tool-call quota of a plan. */
export type ToolCallLimit = McpPlan['limits']['toolCalls'][number];

/** The plans of an MCP product (none for an HTTPRoute product). */
export function mcpPlansOf(product: ApiProduct): McpPlan[] {
  return product.spec.plans ?? [];
}

/**
 * Whether a tool name matches a glob as the broker's plans match them: case-sensitive, `*` any
 * run of characters (none included), every other character only itself.
 */
export function toolGlobMatches(glob: string, tool: string): boolean {
  const source = glob
    .split('*')
    .map(part => part.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's').test(tool);
}

/** The globs of `limit` that match none of `tools` (the server's own tool names). */
export function globsMatchingNoTool(limit: ToolCallLimit, tools: readonly string[]): string[] {
  return (limit.tools ?? []).filter(glob => !tools.some(tool => toolGlobMatches(glob, tool)));
}

/** What a plan without quotas means. */
export const NO_QUOTA_TEXT = 'No quota beyond the broker’s own rate limits';

/** A plan's quotas in words, one per entry; a plan without any says so. */
export function quotaLines(plan: McpPlan): string[] {
  const limits = plan.limits.toolCalls;
  return limits.length === 0 ? [NO_QUOTA_TEXT] : limits.map(describeToolCallLimit);
}

/** The quotas of an MCP product's plan `tier` in words; undefined for other products or tiers. */
export function tierQuotaText(product: ApiProduct | undefined, tier: string): string | undefined {
  if (product === undefined || !isMcpTarget(product.spec.targetRef)) return undefined;
  const plan = mcpPlansOf(product).find(p => p.tier === tier);
  return plan === undefined ? undefined : quotaLines(plan).join('; ');
}

/**
 * The plans a person chooses from when requesting access: an MCP product's tiers with their
 * quotas in the description (beside the plan's own), an HTTPRoute product's `status.plans`.
 */
export function requestablePlans(product: ApiProduct): Plan[] {
  if (!isMcpTarget(product.spec.targetRef)) return product.status?.plans ?? [];
  return mcpPlansOf(product).map(plan => ({
    tier: plan.tier,
    description: [plan.description, quotaLines(plan).join('; ')]
      .filter(text => text !== undefined && text !== '')
      .join(' · '),
  }));
}
