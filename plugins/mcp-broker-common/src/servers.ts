/*
 * What the broker tells the catalog about each of its servers (contract mcp-access §2.5–§2.6):
 * `GET /api/mcp-broker/servers` answers `{items: McpServerDescription[]}`. A description holds
 * the server's offer (tools, prompts, resources as the broker holds them, unfiltered by
 * permissions) and never a backend URL, header or identity setting. The schemas are the
 * contract (`brokerOperations`); the types are inferred from them.
 */
import { z } from 'zod';
import { mcpCatalogResourceSchema, mcpCatalogResourceTemplateSchema } from './catalog';

/**
 * The annotation naming the broker server an entity describes (or an MCP product targets). The
 * portal's `portal-common` exports the same value; a test asserts they are equal.
 *
 * @public
 */
export const MCP_SERVER_ANNOTATION = 'mcp.devportal.io/server';

/** The annotation naming the curated endpoint an entity describes. @public */
export const MCP_ENDPOINT_ANNOTATION = 'mcp.devportal.io/endpoint';

/** The annotation saying where a server's entry came from (`config`, `kubernetes:<ns>/<name>`). @public */
export const MCP_SOURCE_ANNOTATION = 'mcp.devportal.io/source';

/**
 * A server's configured name: lower-case letters, digits and `-` (the broker's config refuses
 * any other).
 *
 * @public
 */
export const MCP_SERVER_NAME_PATTERN = /^[a-z0-9-]+$/;

/** What a description is of: a backend server, or (once they exist) a curated endpoint. @public */
export const mcpServerKindSchema = z.enum(['server', 'endpoint']);

/** What a description is of; see {@link mcpServerKindSchema}. @public */
export type McpServerKind = z.infer<typeof mcpServerKindSchema>;

/** Where a server's entry came from. @public */
export const mcpServerSourceSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('config') }),
  z.object({ type: z.literal('kubernetes'), namespace: z.string(), name: z.string() }),
]);

/** Where a server's entry came from. @public */
export type McpServerSource = z.infer<typeof mcpServerSourceSchema>;

/** One tool of a server, as its entity's definition lists it. @public */
export const mcpToolDefinitionSchema = z.object({
  /** The backend's own name. */
  name: z.string(),
  /** The name clients call through the broker (with the server's tool prefix). */
  brokerName: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  annotations: z.record(z.unknown()).optional(),
  inputSchema: z.unknown().optional(),
  outputSchema: z.unknown().optional(),
  /** The server whose item of the same broker name wins (this one is unreachable). */
  hiddenBy: z.string().optional(),
});

/** One tool of a server; see {@link mcpToolDefinitionSchema}. @public */
export type McpToolDefinition = z.infer<typeof mcpToolDefinitionSchema>;

/** One prompt of a server. @public */
export const mcpPromptDefinitionSchema = z.object({
  name: z.string(),
  brokerName: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z.array(z.unknown()).optional(),
  hiddenBy: z.string().optional(),
});

/** One prompt of a server. @public */
export type McpPromptDefinition = z.infer<typeof mcpPromptDefinitionSchema>;

/** One resource of a server. @public */
export const mcpResourceDefinitionSchema = mcpCatalogResourceSchema.extend({
  hiddenBy: z.string().optional(),
});

/** One resource of a server. @public */
export type McpResourceDefinition = z.infer<typeof mcpResourceDefinitionSchema>;

/** One resource template of a server. @public */
export const mcpResourceTemplateDefinitionSchema = mcpCatalogResourceTemplateSchema.extend({
  hiddenBy: z.string().optional(),
});

/** One resource template of a server. @public */
export type McpResourceTemplateDefinition = z.infer<typeof mcpResourceTemplateDefinitionSchema>;

/**
 * One server (or endpoint) as `GET /servers` describes it: the definition document of the
 * contract's §2.5 plus owner, source, title, description and state.
 *
 * @public
 */
export const mcpServerDescriptionSchema = z.object({
  server: z.string(),
  kind: mcpServerKindSchema,
  toolPrefix: z.string(),
  /** The owner's entity ref (normalised, lower case); absent when nobody was named. */
  owner: z.string().optional(),
  source: mcpServerSourceSchema,
  title: z.string().optional(),
  description: z.string().optional(),
  /** The connection state on the answering replica (B§3), e.g. `ready`, `backing-off`. */
  state: z.string(),
  tools: z.array(mcpToolDefinitionSchema),
  prompts: z.array(mcpPromptDefinitionSchema),
  resources: z.array(mcpResourceDefinitionSchema),
  resourceTemplates: z.array(mcpResourceTemplateDefinitionSchema),
  /** When the answering replica last listed the server; absent when it never has. */
  listedAt: z.string().optional(),
});

/** One server (or endpoint); see {@link mcpServerDescriptionSchema}. @public */
export type McpServerDescription = z.infer<typeof mcpServerDescriptionSchema>;

/** The body of `GET /api/mcp-broker/servers`. @public */
export const mcpServerListSchema = z.object({ items: z.array(mcpServerDescriptionSchema) });

/** The body of `GET /api/mcp-broker/servers`. @public */
export type McpServerList = z.infer<typeof mcpServerListSchema>;
