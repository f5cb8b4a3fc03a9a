/*
 * A plan's quotas as rate limits (docs/contracts/mcp-access.md §6.4): each `limits` entry of an
 * access grant that holds for a request becomes a budget of that person on the grant's server,
 * counted by RateLimiter exactly like a `mcpBroker.rateLimits` entry (the same windows, leases
 * and replicas). The budget's key is `plan:<digest>:<principal>`, the digest covering the source,
 * the product (group), the target and the quota — not the grant id, so cancelling and asking
 * again does not reset a day's quota, while a changed quota starts fresh counters.
 */
import { createHash } from 'node:crypto';
import type { StoredAccessGrant } from '../grants/AccessGrantStore';
import { globMatcher } from '../permissions/rules';
import type { AppliedLimit } from './RateLimitRules';
import { describeWindow } from './RateLimitRules';

/** The prefix of a plan limit's rule id (to tell plan limits from config ones). */
export const PLAN_RULE_PREFIX = 'plan:';

/** Whether `limit` is a plan's (not a `mcpBroker.rateLimits` entry's). */
export function isPlanLimit(limit: AppliedLimit): boolean {
  return limit.rule.id.startsWith(PLAN_RULE_PREFIX);
}

/** One quota of a grant, prepared once: its rule, and which tool calls it counts. */
interface PlanQuota {
  readonly rule: AppliedLimit['rule'];
  readonly limit: AppliedLimit['limit'];
  /** undefined: every request to the server counts; else only tool calls it matches. */
  readonly matchesTool?: (tool: string) => boolean;
}

/**
 * The prepared quotas of each grant object. The index replaces a grant's object when the grant
 * changes, so a prepared entry never outlives what it was made from; admissions do no hashing
 * or glob compiling.
 */
const quotasOfGrant = new WeakMap<StoredAccessGrant, readonly PlanQuota[]>();

function quotasOf(grant: StoredAccessGrant): readonly PlanQuota[] {
  let quotas = quotasOfGrant.get(grant);
  if (quotas === undefined) {
    const source = grant.id.slice(0, grant.id.indexOf(':'));
    quotas = grant.limits.map(limit => {
      const digest = createHash('sha256')
        .update(
          JSON.stringify([
            source,
            grant.group,
            grant.target,
            limit.calls,
            limit.windowMs,
            limit.tools ?? null,
          ]),
        )
        .digest('base64url')
        .slice(0, 16);
      const quota = { calls: limit.calls, windowMs: limit.windowMs };
      return {
        rule: {
          id: `${PLAN_RULE_PREFIX}${digest}`,
          at: `plan "${grant.plan}" of ${grant.title}`,
          server: grant.target.name,
          ...(limit.tools !== undefined && { tool: limit.tools.join(', ') }),
          subject: { kind: 'user', ref: grant.subject },
          limit: quota,
        },
        limit: quota,
        ...(limit.tools !== undefined && { matchesTool: globMatcher([...limit.tools]) }),
      };
    });
    quotasOfGrant.set(grant, quotas);
  }
  return quotas;
}

/**
 * The limits `grant`'s plan puts on `principal`'s request to `server` (a tool call's own tool
 * name in `tool`; other methods: only quotas without a `tools` list count them). Empty: the plan
 * limits nothing here (it always has room).
 */
export function planLimitsOf(
  grant: StoredAccessGrant,
  principal: string,
  tool: string | undefined,
): AppliedLimit[] {
  return quotasOf(grant).flatMap(({ rule, limit, matchesTool }) =>
    matchesTool !== undefined && (tool === undefined || !matchesTool(tool))
      ? []
      : [{ rule, limit, budget: `${rule.id}:${principal}` }],
  );
}

/**
 * Every quota of `grant`'s plan as `principal`'s budget, in the plan's order (what the usage page
 * shows, whichever tools each quota counts).
 */
export function planBudgetsOf(grant: StoredAccessGrant, principal: string): AppliedLimit[] {
  return quotasOf(grant).map(({ rule, limit }) => ({
    rule,
    limit,
    budget: `${rule.id}:${principal}`,
  }));
}

/**
 * A plan refusal in words: `your plan "bronze" of Example tools allows 5 tool calls per day on
 * server "example"` (with `of deploy` when the quota names tools).
 */
export function describePlanLimit(limit: AppliedLimit): string {
  const { calls, windowMs } = limit.limit;
  const what =
    limit.rule.tool === undefined
      ? `${calls} tool call${calls === 1 ? '' : 's'}`
      : `${calls} call${calls === 1 ? '' : 's'} of ${limit.rule.tool}`;
  const window = describeWindow(windowMs);
  return `your ${limit.rule.at} allows ${what} per ${window === 'day' ? 'day (UTC)' : window} on server "${limit.rule.server}"`;
}
