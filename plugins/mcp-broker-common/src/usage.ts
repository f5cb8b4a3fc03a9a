/*
 * The answers of the broker's usage routes (docs/contracts/mcp-access.md §7.3), under
 * `/api/mcp-broker`: `GET /usage/my`, `GET /usage/servers`, `GET /usage/servers/:server`. Days
 * are `YYYY-MM-DD` (UTC); a period is the `days` UTC days ending today, inclusive.
 */

/** One day's counters of one server and tool. @public */
export interface McpUsageDay {
  day: string;
  server: string;
  tool: string;
  /** Admitted calls (succeeded or failed). */
  calls: number;
  /** Admitted calls that failed (an error, an `isError` result, a timeout, the client gone). */
  errors: number;
  /** Calls a rate limit (configured or a plan's) refused. */
  rateLimited: number;
}

/** One quota of a plan, with what the rate limiter counted in its current window. @public */
export interface McpUsageGrantLimit {
  calls: number;
  windowMs: number;
  tools?: string[];
  /** Counted in the current window (see the contract: may run ahead by a tenth when shared). */
  used: number;
  windowEndsAt: string;
}

/** One of the caller's live access grants. @public */
export interface McpUsageGrant {
  id: string;
  target: { kind: 'server' | 'endpoint'; name: string };
  title: string;
  plan: string;
  approvedAt: string;
  expiresAt?: string;
  /** Where the grant is managed (e.g. the portal's My keys page). */
  manage?: string;
  limits: McpUsageGrantLimit[];
}

/** The body of `GET /usage/my`. @public */
export interface MyMcpUsage {
  /** The caller's user entity ref. */
  subject: string;
  from: string;
  to: string;
  days: McpUsageDay[];
  /** The caller's live grants, as the answering replica's index holds them. */
  grants: McpUsageGrant[];
}

/** One server's totals in a period. @public */
export interface McpServerUsageTotals {
  server: string;
  owner?: string;
  calls: number;
  errors: number;
  rateLimited: number;
  /** Distinct principals with calls in the period. */
  people: number;
}

/** The body of `GET /usage/servers`. @public */
export interface McpServerUsageList {
  servers: McpServerUsageTotals[];
}

/** One principal's use of a server in a period. @public */
export interface McpServerUsagePerson {
  /** A user entity ref, or `service:<subject>`. */
  principal: string;
  calls: number;
  errors: number;
  rateLimited: number;
  /** The last day with calls in the period. */
  lastDay: string;
  /** The principal's live grants on the server. */
  grants: Array<{ title: string; plan: string; expiresAt?: string }>;
}

/** The body of `GET /usage/servers/:server`. @public */
export interface McpServerUsage {
  server: string;
  owner?: string;
  from: string;
  to: string;
  /** Counters per day and tool (the chart). */
  series: Array<Omit<McpUsageDay, 'server'>>;
  /** By calls descending, then principal; paged with `limit` and `continue`. */
  people: McpServerUsagePerson[];
  metadata: { continue?: string };
}
