/*
 * The answer of `GET /api/mcp-broker/status` (spec B§3, §11, §13; mcp-access §6.7): each
 * backend's connection state and what the broker noticed, for operators. The schema names
 * the fields pages read and lets the rest of each entry through (`passthrough`): the status is
 * a diagnostic document that grows with the broker, not an API to build on.
 */
import { z } from 'zod';
import { mcpServerSourceSchema } from './servers';

/** One backend as `/status` reports it. @public */
export const mcpBackendStatusSchema = z
  .object({
    name: z.string(),
    url: z.string(),
    /** `connecting`, `connected`, `backing-off`, `failed` or `closed`. */
    state: z.string(),
    /** `modern` (MCP 2026-07-28) or `legacy` (2025-11-25 and earlier); absent until detected. */
    era: z.string().optional(),
    protocolVersion: z.string().optional(),
    lastError: z.string().optional(),
    lastConnectedAt: z.string().optional(),
    nextRetryAt: z.string().optional(),
    consecutiveFailures: z.number().int(),
    source: mcpServerSourceSchema,
    /** The server's identity settings (never a secret). */
    auth: z.object({
      mode: z.string(),
      targetPluginId: z.string().optional(),
      tokenEndpoint: z.string().optional(),
      lastExchangeError: z.unknown().optional(),
    }),
  })
  .passthrough();

/** One backend as `/status` reports it. @public */
export type McpBackendStatus = z.infer<typeof mcpBackendStatusSchema>;

/** Entries shown as the broker builds them (clashes, rejected and withheld tools). */
const entries = z.array(z.unknown());

/** A Kubernetes resource that serves nothing, and why (never a secret). */
const refusedRegistrationSchema = z.object({
  /** `MCPServerRegistration` or `MCPVirtualServer`. */
  kind: z.string(),
  namespace: z.string(),
  name: z.string(),
  /** e.g. `AuthNotAllowed`, `ProfileNotFound`, `UrlNotAllowed`, `UnknownTool`, `Invalid`. */
  reason: z.string(),
  message: z.string(),
});

/** A curated endpoint as `/status` shows it. */
const endpointStatusSchema = z.object({
  name: z.string(),
  servers: z.array(z.string()),
  /** Configured servers the broker does not have (yet). */
  missingServers: z.array(z.string()),
  /** Overrides naming a tool the endpoint does not show. */
  unusedOverrides: z.array(z.string()),
  /** Tools the endpoint shows before permissions. */
  tools: z.number().int(),
  /** Its client sessions on this replica. */
  sessions: z.number().int(),
});

/**
 * The access grants this replica follows (mcp-access §6.7): counts only, no subject, no product.
 * @public
 */
export const accessGrantsStatusSchema = z.object({
  /** The ids of the grant sources (e.g. `portal`). */
  sources: z.array(z.string()),
  /** The last feed revision this replica applied. */
  revision: z.number().int(),
  /** Live grants in this replica's index. */
  live: z.number().int(),
  /** When the feed was last read (ISO 8601); absent before the first read. */
  freshAt: z.string().optional(),
  /** True when the feed was not read for longer than `staleAfter`: no grant applies then. */
  stale: z.boolean(),
  /** This replica's last full sync of the sources; absent before the first. */
  lastFullSync: z
    .object({
      at: z.string(),
      /** False when a source could not be synced (the next run tries again). */
      ok: z.boolean(),
      /** How many sources' grants the sync had to repair in the feed. */
      changed: z.number().int(),
    })
    .optional(),
});

/** The access grants on `/status` (mcp-access §6.7). @public */
export type AccessGrantsStatus = z.infer<typeof accessGrantsStatusSchema>;

/** The body of `GET /api/mcp-broker/status`. @public */
export const mcpBrokerStatusSchema = z
  .object({
    backends: z.array(mcpBackendStatusSchema),
    /** Items of the same broker name on several servers, and which one wins. */
    clashes: entries,
    /** Backend tools left out because their `x-mcp-header` annotations are invalid. */
    rejectedTools: entries,
    /** Backend tools withheld until their changed definition is approved (spec §13). */
    withheldTools: entries,
    clients: z.object({
      sessions: z.number().int(),
      eventStreams: z.number().int(),
      listenStreams: z.number().int(),
      /** The tasks whose lease this replica holds, polling them for their owners' streams. */
      tasksWatched: z.number().int(),
    }),
    /** Kubernetes resources that serve nothing, and why (spec §11.1). */
    registrations: z.object({ refused: z.array(refusedRegistrationSchema) }),
    /** How many permission decisions this replica asked for (the decision cache's misses). */
    permissions: z.object({ authorizeCalls: z.number().int() }),
    /** The curated endpoints (spec §13). */
    endpoints: z.array(endpointStatusSchema),
    /** The access grants (mcp-access §6.7); absent without a grant source. */
    accessGrants: accessGrantsStatusSchema.optional(),
  })
  .passthrough();

/** The body of `GET /api/mcp-broker/status`. @public */
export type McpBrokerStatus = z.infer<typeof mcpBrokerStatusSchema>;
