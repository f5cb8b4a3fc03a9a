/*
 * The answer of `GET /api/mcp-broker/catalog`: what one principal may use of the broker, grouped by
 * the MCP server that serves it. Items carry the names clients use through the broker (tool and
 * prompt names with the server's prefix; resource URIs unchanged) and the fields a person needs to
 * recognise them, not their schemas.
 */

/** A tool as the catalog lists it. @public */
export interface McpCatalogTool {
  /** The name clients call it by through the broker (with the server's prefix). */
  name: string;
  title?: string;
  description?: string;
  /** The tool's MCP annotations (`readOnlyHint`, `destructiveHint`, …) as its server declares them. */
  annotations?: Record<string, unknown>;
}

/** A prompt as the catalog lists it. @public */
export interface McpCatalogPrompt {
  /** The name clients get it by through the broker (with the server's prefix). */
  name: string;
  title?: string;
  description?: string;
  arguments?: Array<{ name: string; description?: string; required?: boolean }>;
}

/** A resource as the catalog lists it. @public */
export interface McpCatalogResource {
  uri: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** A resource template as the catalog lists it. @public */
export interface McpCatalogResourceTemplate {
  uriTemplate: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
}

/** What the caller may use of one MCP server. @public */
export interface McpServerCatalog {
  /** The server's configured name (its resource refs are `<server>:<own name>`). */
  server: string;
  tools: McpCatalogTool[];
  prompts: McpCatalogPrompt[];
  resources: McpCatalogResource[];
  resourceTemplates: McpCatalogResourceTemplate[];
}

/**
 * A curated endpoint the caller may use (spec §13): served at
 * `/api/mcp-broker/endpoints/<name>/mcp`, with at least one tool in the caller's view.
 *
 * @public
 */
export interface McpCatalogEndpoint {
  name: string;
  /** Its `serverInfo.title` (the name unless configured). */
  title: string;
  /** What its `initialize` / `server/discover` tell an agent. */
  instructions?: string;
  /** How many tools the caller sees through it. */
  tools: number;
}

/**
 * `GET /api/mcp-broker/catalog`: the servers of which the caller may use at least one item, in the
 * broker's order, each with the items the caller may use, and the curated endpoints through which
 * the caller sees at least one tool (in config order).
 *
 * @public
 */
export interface McpBrokerCatalog {
  servers: McpServerCatalog[];
  /** Absent from brokers without curated endpoints. */
  endpoints?: McpCatalogEndpoint[];
}
