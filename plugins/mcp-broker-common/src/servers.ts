/*
 * What the broker tells the catalog about each of its servers (contract mcp-access §2.5–§2.6):
 * `GET /api/mcp-broker/servers` answers `{items: McpServerDescription[]}`. A description holds
 * the server's offer (tools, prompts, resources as the broker holds them, unfiltered by
 * permissions) and never a backend URL, header or identity setting.
 */

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

/** What a description is of: a backend server, or (once they exist) a curated endpoint. @public */
export type McpServerKind = 'server' | 'endpoint';

/** Where a server's entry came from. @public */
export type McpServerSource =
  { type: 'config' } | { type: 'kubernetes'; namespace: string; name: string };

/** One tool of a server, as its entity's definition lists it. @public */
export interface McpToolDefinition {
  /** The backend's own name. */
  name: string;
  /** The name clients call through the broker (with the server's tool prefix). */
  brokerName: string;
  title?: string;
  description?: string;
  annotations?: Record<string, unknown>;
  inputSchema?: unknown;
  outputSchema?: unknown;
  /** The server whose item of the same broker name wins (this one is unreachable). */
  hiddenBy?: string;
}

/** One prompt of a server. @public */
export interface McpPromptDefinition {
  name: string;
  brokerName: string;
  title?: string;
  description?: string;
  arguments?: unknown[];
  hiddenBy?: string;
}

/** One resource of a server. @public */
export interface McpResourceDefinition {
  uri: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
  hiddenBy?: string;
}

/** One resource template of a server. @public */
export interface McpResourceTemplateDefinition {
  uriTemplate: string;
  name?: string;
  title?: string;
  description?: string;
  mimeType?: string;
  hiddenBy?: string;
}

/**
 * One server (or endpoint) as `GET /servers` describes it: the definition document of the
 * contract's §2.5 plus owner, source, title, description and state.
 *
 * @public
 */
export interface McpServerDescription {
  server: string;
  kind: McpServerKind;
  toolPrefix: string;
  /** The owner's entity ref (normalised, lower case); absent when nobody was named. */
  owner?: string;
  source: McpServerSource;
  title?: string;
  description?: string;
  /** The connection state on the answering replica (B§3), e.g. `ready`, `backing-off`. */
  state: string;
  tools: McpToolDefinition[];
  prompts: McpPromptDefinition[];
  resources: McpResourceDefinition[];
  resourceTemplates: McpResourceTemplateDefinition[];
  /** When the answering replica last listed the server; absent when it never has. */
  listedAt?: string;
}

/** The body of `GET /api/mcp-broker/servers`. @public */
export interface McpServerList {
  items: McpServerDescription[];
}
