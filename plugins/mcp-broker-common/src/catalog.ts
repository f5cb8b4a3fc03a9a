/*
 * The answer of `GET /api/mcp-broker/catalog`: what one principal may use of the broker, grouped by
 * the MCP server that serves it. Items carry the names clients use through the broker (tool and
 * prompt names with the server's prefix; resource URIs unchanged) and the fields a person needs to
 * recognise them, not their schemas. The schemas are the contract (`brokerOperations`); the
 * types are inferred from them.
 */
import { z } from 'zod';

/** A tool as the catalog lists it. @public */
export const mcpCatalogToolSchema = z.object({
  /** The name clients call it by through the broker (with the server's prefix). */
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  /** The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, …) as its server declares them. */
  annotations: z.record(z.unknown()).optional(),
});

/** A tool as the catalog lists it. @public */
export type McpCatalogTool = z.infer<typeof mcpCatalogToolSchema>;

/** A prompt as the catalog lists it. @public */
export const mcpCatalogPromptSchema = z.object({
  /** The name clients get it by through the broker (with the server's prefix). */
  name: z.string(),
  title: z.string().optional(),
  description: z.string().optional(),
  arguments: z
    .array(
      z.object({
        name: z.string(),
        description: z.string().optional(),
        required: z.boolean().optional(),
      }),
    )
    .optional(),
});

/** A prompt as the catalog lists it. @public */
export type McpCatalogPrompt = z.infer<typeof mcpCatalogPromptSchema>;

/** A resource as the catalog lists it. @public */
export const mcpCatalogResourceSchema = z.object({
  uri: z.string(),
  name: z.string().optional(),
  title: z.string().optional(),
  description: z.string().optional(),
  mimeType: z.string().optional(),
});

/** A resource as the catalog lists it. @public */
export type McpCatalogResource = z.infer<typeof mcpCatalogResourceSchema>;

/** A resource template as the catalog lists it. @public */
export const mcpCatalogResourceTemplateSchema = mcpCatalogResourceSchema
  .omit({ uri: true })
  .extend({ uriTemplate: z.string() });

/** A resource template as the catalog lists it. @public */
export type McpCatalogResourceTemplate = z.infer<typeof mcpCatalogResourceTemplateSchema>;

/** What the caller may use of one MCP server. @public */
export const mcpServerCatalogSchema = z.object({
  /** The server's configured name (its resource refs are `<server>:<own name>`). */
  server: z.string(),
  tools: z.array(mcpCatalogToolSchema),
  prompts: z.array(mcpCatalogPromptSchema),
  resources: z.array(mcpCatalogResourceSchema),
  resourceTemplates: z.array(mcpCatalogResourceTemplateSchema),
});

/** What the caller may use of one MCP server. @public */
export type McpServerCatalog = z.infer<typeof mcpServerCatalogSchema>;

/**
 * A curated endpoint the caller may use (spec §13): served at
 * `/api/mcp-broker/endpoints/<name>/mcp`, with at least one tool in the caller's view.
 *
 * @public
 */
export const mcpCatalogEndpointSchema = z.object({
  name: z.string(),
  /** Its `serverInfo.title` (the name unless configured). */
  title: z.string(),
  /** What its `initialize` / `server/discover` tell an agent. */
  instructions: z.string().optional(),
  /** How many tools the caller sees through it. */
  tools: z.number().int().nonnegative(),
});

/** A curated endpoint the caller may use; see {@link mcpCatalogEndpointSchema}. @public */
export type McpCatalogEndpoint = z.infer<typeof mcpCatalogEndpointSchema>;

/**
 * `GET /api/mcp-broker/catalog`: the servers of which the caller may use at least one item, in the
 * broker's order, each with the items the caller may use, and the curated endpoints through which
 * the caller sees at least one tool (in config order).
 *
 * @public
 */
export const mcpBrokerCatalogSchema = z.object({
  servers: z.array(mcpServerCatalogSchema),
  /** Absent from brokers without curated endpoints. */
  endpoints: z.array(mcpCatalogEndpointSchema).optional(),
});

/** The body of `GET /api/mcp-broker/catalog`; see {@link mcpBrokerCatalogSchema}. @public */
export type McpBrokerCatalog = z.infer<typeof mcpBrokerCatalogSchema>;
