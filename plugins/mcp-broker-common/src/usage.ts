/*
 * The usage routes' queries and answers (docs/contracts/mcp-access.md §7.3), under
 * `/api/mcp-broker`: `GET /usage/my`, `GET /usage/servers`, `GET /usage/servers/:server`. Days
 * are `YYYY-MM-DD` (UTC); a period is the `days` UTC days ending today, inclusive. The schemas
 * are the contract (`brokerOperations`); the types are inferred from them.
 */
import { z } from 'zod';
import { MCP_SERVER_NAME_PATTERN } from './servers';

/** Default and bounds of the usage routes' `days` (UTC days ending today). @public */
export const MCP_USAGE_DAYS = { default: 30, min: 1, max: 400 } as const;

/** Default and bounds of `limit` on `GET /usage/servers/:server`. @public */
export const MCP_USAGE_PAGE_LIMIT = { default: 100, min: 1, max: 1000 } as const;

/** A whole number from a query string, within bounds, named in its message. */
function wholeNumber(name: string, bounds: { default: number; min: number; max: number }) {
  const message = `${name} must be a whole number from ${bounds.min} to ${bounds.max}`;
  return z
    .string({ invalid_type_error: `${name} must be given once` })
    .regex(/^\d{1,4}$/, message)
    .transform(Number)
    .pipe(z.number().min(bounds.min, message).max(bounds.max, message))
    .default(String(bounds.default));
}

/** A server name as a query or path parameter, named in its message. @public */
export const mcpServerNameParamSchema = z
  .string({ invalid_type_error: 'server must be given once' })
  .regex(
    MCP_SERVER_NAME_PATTERN,
    'server must be a server name: lower-case letters, digits and "-"',
  );

const days = wholeNumber('days', MCP_USAGE_DAYS);

/** The query of `GET /usage/my`. @public */
export const myMcpUsageQuerySchema = z
  .object({ days, server: mcpServerNameParamSchema.optional() })
  .strict();

/** The query of `GET /usage/servers`. @public */
export const mcpServerUsageListQuerySchema = z.object({ days }).strict();

/** The query of `GET /usage/servers/:server`. @public */
export const mcpServerUsageQuerySchema = z
  .object({
    days,
    limit: wholeNumber('limit', MCP_USAGE_PAGE_LIMIT),
    continue: z.string({ invalid_type_error: 'continue must be given once' }).optional(),
  })
  .strict();

const counters = {
  /** Admitted calls (succeeded or failed). */
  calls: z.number().int().nonnegative(),
  /** Admitted calls that failed (an error, an `isError` result, a timeout, the client gone). */
  errors: z.number().int().nonnegative(),
  /** Calls a rate limit (configured or a plan's) refused. */
  rateLimited: z.number().int().nonnegative(),
};

/** One day's counters of one server and tool. @public */
export const mcpUsageDaySchema = z.object({
  day: z.string(),
  server: z.string(),
  tool: z.string(),
  ...counters,
});

/** One day's counters of one server and tool. @public */
export type McpUsageDay = z.infer<typeof mcpUsageDaySchema>;

/** One quota of a plan, with what the rate limiter counted in its current window. @public */
export const mcpUsageGrantLimitSchema = z.object({
  calls: z.number().int(),
  windowMs: z.number().int(),
  tools: z.array(z.string()).optional(),
  /** Counted in the current window (see the contract: may run ahead by a tenth when shared). */
  used: z.number(),
  windowEndsAt: z.string(),
});

/** One quota of a plan, with its count. @public */
export type McpUsageGrantLimit = z.infer<typeof mcpUsageGrantLimitSchema>;

/** One of the caller's live access grants. @public */
export const mcpUsageGrantSchema = z.object({
  id: z.string(),
  target: z.object({ kind: z.enum(['server', 'endpoint']), name: z.string() }),
  title: z.string(),
  plan: z.string(),
  approvedAt: z.string(),
  expiresAt: z.string().optional(),
  /** Where the grant is managed (e.g. the portal's My keys page). */
  manage: z.string().optional(),
  limits: z.array(mcpUsageGrantLimitSchema),
});

/** One of the caller's live access grants. @public */
export type McpUsageGrant = z.infer<typeof mcpUsageGrantSchema>;

/** The body of `GET /usage/my`. @public */
export const myMcpUsageSchema = z.object({
  /** The caller's user entity ref. */
  subject: z.string(),
  from: z.string(),
  to: z.string(),
  days: z.array(mcpUsageDaySchema),
  /** The caller's live grants, as the answering replica's index holds them. */
  grants: z.array(mcpUsageGrantSchema),
});

/** The body of `GET /usage/my`. @public */
export type MyMcpUsage = z.infer<typeof myMcpUsageSchema>;

/** One server's totals in a period. @public */
export const mcpServerUsageTotalsSchema = z.object({
  server: z.string(),
  owner: z.string().optional(),
  ...counters,
  /** Distinct principals with calls in the period. */
  people: z.number().int().nonnegative(),
});

/** One server's totals in a period. @public */
export type McpServerUsageTotals = z.infer<typeof mcpServerUsageTotalsSchema>;

/** The body of `GET /usage/servers`. @public */
export const mcpServerUsageListSchema = z.object({ servers: z.array(mcpServerUsageTotalsSchema) });

/** The body of `GET /usage/servers`. @public */
export type McpServerUsageList = z.infer<typeof mcpServerUsageListSchema>;

/** One principal's use of a server in a period. @public */
export const mcpServerUsagePersonSchema = z.object({
  /** A user entity ref, or `service:<subject>`. */
  principal: z.string(),
  ...counters,
  /** The last day with calls in the period. */
  lastDay: z.string(),
  /** The principal's live grants on the server. */
  grants: z.array(
    z.object({ title: z.string(), plan: z.string(), expiresAt: z.string().optional() }),
  ),
});

/** One principal's use of a server in a period. @public */
export type McpServerUsagePerson = z.infer<typeof mcpServerUsagePersonSchema>;

/** The body of `GET /usage/servers/:server`. @public */
export const mcpServerUsageSchema = z.object({
  server: z.string(),
  owner: z.string().optional(),
  from: z.string(),
  to: z.string(),
  /** Counters per day and tool (the chart). */
  series: z.array(mcpUsageDaySchema.omit({ server: true })),
  /** By calls descending, then principal; paged with `limit` and `continue`. */
  people: z.array(mcpServerUsagePersonSchema),
  metadata: z.object({ continue: z.string().optional() }),
});

/** The body of `GET /usage/servers/:server`. @public */
export type McpServerUsage = z.infer<typeof mcpServerUsageSchema>;
