/*
 * The records the portal answers with (spec §1), as zod schemas: the one source of the
 * response types (./types.ts infers them) and of the response schemas of the backend's
 * openapi.yaml (generated from these, and the backend's tests validate real answers against
 * that document). Nothing here validates at run time: the server builds these records, it
 * does not parse them.
 *
 * Objects are left open (no `.strict()`) where a newer server may add fields a client should
 * ignore; the spec objects the server checks field by field are strict. Build a schema that
 * appears twice inside another with a function (as `timestamp()` below), or name it as a
 * document component: the document generator refuses a repeated unnamed instance. A schema
 * used inside another is written `x as typeof x`, so that declarations (and the API report)
 * name it instead of repeating its whole type.
 */
import { z } from 'zod';
import { DEVPORTAL_API_VERSION } from './constants';
import { mcpPlanSchema, mcpToolCallLimitSchema, targetRefInputSchema } from './mcpTargets';

/** An RFC 3339 timestamp (`format: date-time` in the document). */
const timestamp = () => z.string().datetime({ offset: true });
const stringMap = () => z.record(z.string(), z.string());
const openObject = () => z.record(z.string(), z.unknown());

/** Approval mode of an API product. @public */
export const approvalModeSchema = z.enum(['manual', 'automatic']);

/** Publication state of an API product. @public */
export const publishStatusSchema = z.enum(['Draft', 'Published']);

/** Phase of an API key request. @public */
export const apiKeyPhaseSchema = z.enum(['Pending', 'Approved', 'Rejected']);

/** Object metadata as the API returns it (never `managedFields`). @public */
export const objectMetaSchema = z.object({
  namespace: z.string(),
  name: z.string(),
  uid: z.string(),
  resourceVersion: z.string(),
  creationTimestamp: timestamp(),
  labels: stringMap().optional(),
  annotations: stringMap().optional(),
});

/** What an API product exposes: an HTTPRoute, or an MCP server or endpoint. @public */
export const targetRefSchema = targetRefInputSchema;

/** The plans of an MCP product as stored (tool-call quotas). @public */
export const mcpPlansSchema = z.array(mcpPlanSchema);

/** The `spec` of an API product as stored (defaults filled in). @public */
export const apiProductSpecSchema = z
  .object({
    displayName: z.string().min(1).max(253),
    description: z.string().optional(),
    version: z.string().optional(),
    targetRef: targetRefSchema as typeof targetRefSchema,
    plans: (mcpPlansSchema as typeof mcpPlansSchema).optional(),
    approvalMode: approvalModeSchema,
    publishStatus: publishStatusSchema,
    tags: z.array(z.string()).optional(),
    documentation: z
      .object({
        openAPISpecURL: z.string().url().optional(),
        docsURL: z.string().url().optional(),
      })
      .strict()
      .optional(),
    contact: z
      .object({
        email: z.string().email().optional(),
        team: z.string().optional(),
        url: z.string().url().optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

/** A plan offered by a product (from the PlanPolicies targeting its route). @public */
export const planSchema = z.object({
  tier: z.string(),
  description: z.string().optional(),
  limits: openObject().optional(),
});

/** The `status` of an API product: its plans. @public */
export const apiProductStatusSchema = z.object({
  plans: z.array(planSchema as typeof planSchema),
});

/**
 * An API product. The API always answers with its `status`; it is optional because a
 * product that did not come from the API (a fixture, an event) may lack it.
 * @public
 */
export const apiProductSchema = z.object({
  apiVersion: z.literal(DEVPORTAL_API_VERSION),
  kind: z.literal('APIProduct'),
  metadata: objectMetaSchema as typeof objectMetaSchema,
  spec: apiProductSpecSchema as typeof apiProductSpecSchema,
  status: (apiProductStatusSchema as typeof apiProductStatusSchema).optional(),
});

/** The `spec` of an API key request. @public */
export const apiKeySpecSchema = z.object({
  apiProductRef: z.object({ name: z.string() }),
  planTier: z.string(),
  useCase: z.string().max(1000).optional(),
  requestedBy: z.object({ userId: z.string(), email: z.string().optional() }),
  expiresAt: timestamp().optional(),
  /**
   * Set by the server on an access request of an MCP product (contract mcp-access §4.1): the
   * product's target, copied when the request is created. Its presence tells an access
   * request from an API key.
   */
  mcpTarget: z.object({ kind: z.enum(['MCPServer', 'MCPEndpoint']), name: z.string() }).optional(),
});

/** The `status` of an API key request (set by the server only). @public */
export const apiKeyStatusSchema = z.object({
  phase: apiKeyPhaseSchema,
  reviewedBy: z.string().optional(),
  reviewedAt: timestamp().optional(),
  reason: z.string().optional(),
  secretRevealed: z.boolean(),
  secretRevealedAt: timestamp().optional(),
});

/** An API key request (never its secret). @public */
export const apiKeySchema = z.object({
  apiVersion: z.literal(DEVPORTAL_API_VERSION),
  kind: z.literal('APIKey'),
  metadata: objectMetaSchema as typeof objectMetaSchema,
  spec: apiKeySpecSchema as typeof apiKeySpecSchema,
  status: apiKeyStatusSchema as typeof apiKeyStatusSchema,
});

/**
 * A live access grant (contract mcp-access §4.8): an Approved, unexpired access request of an
 * MCP product, with the product's current plan for its tier. What the broker's portal module
 * reads; never a secret.
 * @public
 */
export const mcpGrantSchema = z.object({
  key: z.object({ namespace: z.string(), name: z.string(), uid: z.string() }),
  product: z.object({ namespace: z.string(), name: z.string(), displayName: z.string() }),
  target: z.object({ kind: z.enum(['MCPServer', 'MCPEndpoint']), name: z.string() }),
  subject: z.string().describe("the requester's user entity ref, lower case"),
  tier: z.string(),
  limits: z
    .object({ toolCalls: z.array(mcpToolCallLimitSchema as typeof mcpToolCallLimitSchema) })
    .describe("the product's current plan for the tier (no quota when the tier has none)"),
  approvedAt: timestamp(),
  expiresAt: timestamp().optional(),
});

/**
 * A read-only object (HTTPRoute, PlanPolicy, AuthPolicy, RateLimitPolicy) as it comes from
 * a manifest file or the cluster: only `namespace` and `name` of its metadata are sure.
 * @public
 */
export const readOnlyObjectSchema = z.object({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: z.object({
    namespace: z.string(),
    name: z.string(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    creationTimestamp: z.string().optional(),
    labels: stringMap().optional(),
    annotations: stringMap().optional(),
  }),
  spec: z.unknown().describe('as the manifest or the cluster has it'),
  status: z.unknown().describe('as the manifest or the cluster has it'),
});
