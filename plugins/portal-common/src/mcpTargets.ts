/*
 * What an API product exposes (contract mcp-access §3.1–§3.2): an HTTPRoute, or a server or
 * curated endpoint of the MCP broker, and the tool-call quotas an MCP product's plans carry.
 * The input and output schemas of products use these; `isMcpTarget` and `mcpTargetKey` are
 * the one place that tells the kinds apart and spells a target, so no caller compares
 * `group` strings again.
 *
 * Safe in a browser bundle (zod only).
 */
import { z } from 'zod';
import { MCP_TARGET_GROUP } from './constants';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const httpRouteTargetRef = z
  .object({
    group: z.literal('gateway.networking.k8s.io'),
    kind: z.literal('HTTPRoute'),
    name: z.string().min(1).max(253),
  })
  .strict();

// A function: the OpenAPI generator refuses one schema instance used in two places.
const mcpName = () =>
  z
    .string()
    .max(253)
    .regex(
      /^[a-z0-9-]+$/,
      'must be a broker server or endpoint name: lowercase letters, digits and "-"',
    );

const mcpServerTargetRef = z
  .object({ group: z.literal(MCP_TARGET_GROUP), kind: z.literal('MCPServer'), name: mcpName() })
  .strict();

const mcpEndpointTargetRef = z
  .object({ group: z.literal(MCP_TARGET_GROUP), kind: z.literal('MCPEndpoint'), name: mcpName() })
  .strict();

/**
 * What an API product exposes: an HTTPRoute (in the product's namespace), or a server or
 * curated endpoint of the MCP broker. The same schema checks bodies and describes answers.
 * @public
 */
export const targetRefInputSchema = z.discriminatedUnion('kind', [
  httpRouteTargetRef,
  mcpServerTargetRef,
  mcpEndpointTargetRef,
]);

/** The kinds of target an MCP product may have. @public */
export type McpTargetKind = 'MCPServer' | 'MCPEndpoint';

/** An MCP target by kind and name (the key's `spec.mcpTarget`, an event's `target`). @public */
export interface McpTarget {
  kind: McpTargetKind;
  name: string;
}

/** Whether a product's target is an MCP server or endpoint (not an HTTPRoute). @public */
export function isMcpTarget(ref: { kind: string; name: string }): ref is McpTarget {
  return ref.kind === 'MCPServer' || ref.kind === 'MCPEndpoint';
}

/** The one spelling of a target in columns, labels, events and messages: `MCPServer/example`. @public */
export function mcpTargetKey(ref: { kind: string; name: string }): string {
  return `${ref.kind}/${ref.name}`;
}

/** How a person names a target in a message: `MCP server "example"`. @public */
export function describeMcpTarget(ref: McpTarget): string {
  return `${ref.kind === 'MCPServer' ? 'MCP server' : 'MCP endpoint'} "${ref.name}"`;
}

/**
 * One quota of a plan: at most `calls` tool calls per fixed window (aligned to the epoch,
 * days in UTC), by one person, on the product's target; `tools` (globs of the server's own
 * tool names) narrows it, absent: every tool together.
 * @public
 */
export const mcpToolCallLimitSchema = z
  .object({
    calls: z.number().int().min(1).max(1_000_000_000),
    per: z.enum(['minute', 'hour', 'day']),
    tools: z.array(z.string().min(1).max(253)).min(1).max(50).optional(),
  })
  .strict();

/** A plan of an MCP product: a tier and its tool-call quotas. @public */
export const mcpPlanSchema = z
  .object({
    tier: z
      .string()
      .max(63)
      .regex(
        DNS1123_LABEL,
        'must be a DNS-1123 label: at most 63 lowercase letters, digits and "-", starting and ending with a letter or digit',
      ),
    description: z.string().max(1000).optional(),
    limits: z.object({ toolCalls: z.array(mcpToolCallLimitSchema).max(10) }).strict(),
  })
  .strict();

/** The plans of an MCP product, in a body: 1–20, replaced as a whole by a patch. @public */
export const mcpPlansInputSchema = z.array(mcpPlanSchema).min(1).max(20);

/**
 * A quota as people read it: `5 tool calls per day (UTC)`, `10 calls of deploy per minute`.
 * @public
 */
export function describeToolCallLimit(limit: z.infer<typeof mcpToolCallLimitSchema>): string {
  const what =
    limit.tools === undefined
      ? `${limit.calls} tool call${limit.calls === 1 ? '' : 's'}`
      : `${limit.calls} call${limit.calls === 1 ? '' : 's'} of ${limit.tools.join(', ')}`;
  return `${what} per ${limit.per === 'day' ? 'day (UTC)' : limit.per}`;
}
