/*
 * The pinned tool definitions' routes (spec §13): `GET /api/mcp-broker/pins` lists the held and
 * rejected changes of tool definitions, each with the pinned and the changed definition side by
 * side; `POST /api/mcp-broker/pins/<server>/<tool>/approve|reject` decides one. The schemas are
 * the contract (`brokerOperations`); the types are inferred from them.
 */
import { z } from 'zod';

/** The members of a tool definition a pin covers (name, description, annotations, schemas). @public */
export type McpPinnedToolDefinition = Record<string, unknown>;

const definition = z.record(z.unknown());

/** One held (or rejected) change of a tool's definition. @public */
export const mcpToolChangeSchema = z.object({
  /** The broker's server name. */
  server: z.string(),
  /** The backend's own tool name. */
  tool: z.string(),
  /** The name clients see (with the server's prefix), while the server is configured. */
  name: z.string().optional(),
  /** `held`: waiting for a decision; `rejected`: refused, the tool stays withheld. */
  state: z.enum(['held', 'rejected']),
  /** When the change was first seen (ISO 8601). */
  since: z.string(),
  /** Who rejected it. */
  rejectedBy: z.string().optional(),
  /** The definition clients were served. */
  pinned: z.object({
    digest: z.string(),
    definition,
    pinnedAt: z.string(),
    approvedBy: z.string().optional(),
  }),
  /** The definition the backend serves now. */
  changed: z.object({ digest: z.string(), definition }),
});

/** One held (or rejected) change of a tool's definition. @public */
export type McpToolChange = z.infer<typeof mcpToolChangeSchema>;

/** The answer of `GET /api/mcp-broker/pins`. @public */
export const mcpToolChangesSchema = z.object({ changes: z.array(mcpToolChangeSchema) });

/** The answer of `GET /api/mcp-broker/pins`. @public */
export type McpToolChanges = z.infer<typeof mcpToolChangesSchema>;

/** A decision on a held change. @public */
export const mcpToolChangeDecisionSchema = z.enum(['approve', 'reject']);

/** A decision on a held change. @public */
export type McpToolChangeDecision = z.infer<typeof mcpToolChangeDecisionSchema>;

/**
 * The body of a decision: `digest` names the changed definition the approver looked at (a
 * decision on a definition changed since is refused with 409).
 *
 * @public
 */
export const mcpToolChangeDecisionBodySchema = z
  .object({
    digest: z
      .string({ invalid_type_error: 'digest must be a string' })
      .regex(/^[0-9a-f]{64}$/, 'digest must be the 64 hex digits GET /pins shows')
      .optional(),
  })
  .strict();

/** The answer of a decision: the tool's pin after it. @public */
export const mcpToolChangeDecisionResultSchema = z.object({
  server: z.string(),
  tool: z.string(),
  digest: z.string(),
  /** `pinned` once approved; `held`/`rejected` while a change is still pending. */
  state: z.enum(['pinned', 'held', 'rejected']),
});

/** The answer of a decision. @public */
export type McpToolChangeDecisionResult = z.infer<typeof mcpToolChangeDecisionResultSchema>;
