/*
 * The MCP broker's REST routes as the portal's MCP pages consume them: what the signed-in person
 * may use (GET /catalog, decided by the broker per principal), the backends' state (GET /status,
 * for holders of mcp-broker.status.read), the endpoint an IDE connects to, and the person's own
 * stored credentials (My connections: names and dates, never a value).
 */
import { createApiRef } from '@backstage/frontend-plugin-api';
import type {
  McpConnection as BrokerMcpConnection,
  McpBrokerCatalog,
  McpServerUsage,
  McpServerUsageList,
  McpToolChangeDecision,
  McpToolChanges,
  MyMcpUsage,
} from '@devportal/plugin-mcp-broker-common';

/**
 * One backend MCP server as `GET /api/mcp-broker/status` reports it: the fields the MCP page shows.
 *
 * @public
 */
export interface McpBackendStatus {
  name: string;
  url: string;
  /** `connecting`, `connected`, `backing-off`, `failed` or `closed`. */
  state: string;
  /** `modern` (MCP 2026-07-28) or `legacy` (2025-11-25 and earlier); absent until detected. */
  era?: string;
  protocolVersion?: string;
  lastError?: string;
  lastConnectedAt?: string;
  nextRetryAt?: string;
}

/** The part of `GET /api/mcp-broker/status` the MCP page shows. @public */
export interface McpBrokerStatus {
  backends: McpBackendStatus[];
}

/**
 * One line of `GET /api/mcp-broker/credentials` (the broker's contract type).
 *
 * @public
 */
export type McpConnection = BrokerMcpConnection;

/**
 * The MCP broker's REST routes.
 *
 * @public
 */
export interface McpBrokerApi {
  /** The MCP endpoint clients connect to (`…/api/mcp-broker/mcp`). */
  getEndpointUrl(): Promise<string>;
  /** What the signed-in person may use, per server (403 without `mcp-broker.session.create`). */
  getCatalog(): Promise<McpBrokerCatalog>;
  /** Each backend's state (403 without `mcp-broker.status.read`). */
  getStatus(): Promise<McpBrokerStatus>;
  /** Held and rejected tool definition changes (403 without `mcp-broker.tool.approve`). */
  getToolChanges(): Promise<McpToolChanges>;
  /**
   * Approves or rejects the changed definition `digest` of a server's tool (its own name); 409
   * when the backend changed the tool again since.
   */
  decideToolChange(
    server: string,
    tool: string,
    decision: McpToolChangeDecision,
    digest: string,
  ): Promise<void>;
  /** The signed-in person's connections (servers taking a personal credential, and theirs). */
  listConnections(): Promise<McpConnection[]>;
  /**
   * Stores (or replaces) the person's credential for `server`; `elicitationId` completes the
   * MCP client's URL elicitation that sent them here. Written with Backstage's sign-in cookie
   * from the person's browser, never with a token (the broker refuses token writes).
   */
  storeConnection(server: string, value: string, elicitationId?: string): Promise<void>;
  /** Deletes the person's credential for `server` (the same cookie write). */
  deleteConnection(server: string): Promise<void>;
  /**
   * The person's own tool calls per day, server and tool over the last `days` UTC days, and
   * their live access grants with each quota's count (403 without `mcp-broker.session.create`).
   */
  getMyUsage(days: number): Promise<MyMcpUsage>;
  /** Each server's totals over the last `days` UTC days that the person may read (`mcp-broker.usage.read`). */
  listServerUsage(days: number): Promise<McpServerUsageList>;
  /**
   * One server's calls per day and tool, and a page of its people by calls (`mcp-broker.usage.read`
   * on that server, else 403).
   */
  getServerUsage(
    server: string,
    options: { days: number; limit?: number; continue?: string },
  ): Promise<McpServerUsage>;
}

/**
 * The API ref of {@link McpBrokerApi}; replaceable like {@link portalApiRef}.
 *
 * @public
 */
export const mcpBrokerApiRef = createApiRef<McpBrokerApi>().with({
  id: 'plugin.portal.mcp-broker',
  pluginId: 'portal',
});
