/*
 * The answers of the pinned tool definitions' routes (spec §13): `GET /api/mcp-broker/pins` lists
 * the held and rejected changes of tool definitions, each with the pinned and the changed
 * definition side by side; `POST /api/mcp-broker/pins/<server>/<tool>/approve|reject` decides one.
 */

/** The members of a tool definition a pin covers (name, description, annotations, schemas). @public */
export type McpPinnedToolDefinition = Record<string, unknown>;

/** One held (or rejected) change of a tool's definition. @public */
export interface McpToolChange {
  /** The broker's server name. */
  server: string;
  /** The backend's own tool name. */
  tool: string;
  /** The name clients see (with the server's prefix), while the server is configured. */
  name?: string;
  /** `held`: waiting for a decision; `rejected`: refused, the tool stays withheld. */
  state: 'held' | 'rejected';
  /** When the change was first seen (ISO 8601). */
  since: string;
  /** Who rejected it. */
  rejectedBy?: string;
  /** The definition clients were served. */
  pinned: {
    digest: string;
    definition: McpPinnedToolDefinition;
    pinnedAt: string;
    approvedBy?: string;
  };
  /** The definition the backend serves now. */
  changed: { digest: string; definition: McpPinnedToolDefinition };
}

/** The answer of `GET /api/mcp-broker/pins`. @public */
export interface McpToolChanges {
  changes: McpToolChange[];
}

/** A decision on a held change. @public */
export type McpToolChangeDecision = 'approve' | 'reject';
