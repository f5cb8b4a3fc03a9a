/*
 * The broker's permissions and four resource types (spec §8, docs/contracts/mcp-access.md §6.9),
 * defined once: the
 * backend registers them, policies (RBAC CSV and conditional files) grant them by name.
 * Resource permissions carry no `action` attribute except `resource.read`: RBAC then shows
 * and matches them with its `use` action.
 */
import { createPermission } from '@backstage/plugin-permission-common';

/**
 * Resource type of backend tools (ref `server:name`, the tool's own name).
 *
 * @public
 */
export const MCP_BROKER_TOOL_RESOURCE_TYPE = 'mcp-broker-tool';

/**
 * Resource type of backend prompts (ref `server:name`, the prompt's own name).
 *
 * @public
 */
export const MCP_BROKER_PROMPT_RESOURCE_TYPE = 'mcp-broker-prompt';

/**
 * Resource type of backend resources and resource templates (ref `server:uri`, where `uri` is
 * the resource URI or the URI template).
 *
 * @public
 */
export const MCP_BROKER_RESOURCE_RESOURCE_TYPE = 'mcp-broker-resource';

/**
 * Resource type of the broker's servers (ref: the configured server name), for the usage pages
 * (docs/contracts/mcp-access.md §7.3).
 *
 * @public
 */
export const MCP_BROKER_SERVER_RESOURCE_TYPE = 'mcp-broker-server';

/**
 * Start an MCP session (`initialize`). Without it the broker answers HTTP 403.
 *
 * @public
 */
export const mcpBrokerSessionCreatePermission = createPermission({
  name: 'mcp-broker.session.create',
  attributes: { action: 'create' },
});

/**
 * See a tool in `tools/list` and call it. A denied tool answers like one that exists nowhere.
 *
 * @public
 */
export const mcpBrokerToolUsePermission = createPermission({
  name: 'mcp-broker.tool.use',
  attributes: {},
  resourceType: MCP_BROKER_TOOL_RESOURCE_TYPE,
});

/**
 * See a prompt in `prompts/list` and get it.
 *
 * @public
 */
export const mcpBrokerPromptUsePermission = createPermission({
  name: 'mcp-broker.prompt.use',
  attributes: {},
  resourceType: MCP_BROKER_PROMPT_RESOURCE_TYPE,
});

/**
 * See a resource or resource template in the lists and read it.
 *
 * @public
 */
export const mcpBrokerResourceReadPermission = createPermission({
  name: 'mcp-broker.resource.read',
  attributes: { action: 'read' },
  resourceType: MCP_BROKER_RESOURCE_RESOURCE_TYPE,
});

/**
 * Read the broker's status endpoint (`GET /api/mcp-broker/status`).
 *
 * @public
 */
export const mcpBrokerStatusReadPermission = createPermission({
  name: 'mcp-broker.status.read',
  attributes: { action: 'read' },
});

/**
 * Approve or reject a backend's changed tool definition held by pinning (spec §13), and list
 * the held changes (`/api/mcp-broker/pins`).
 *
 * @public
 */
export const mcpBrokerToolApprovePermission = createPermission({
  name: 'mcp-broker.tool.approve',
  attributes: { action: 'update' },
});

/**
 * Read every server's description (`GET /api/mcp-broker/servers`, contract mcp-access §2.6):
 * owner, source and tool/prompt/resource definitions, unfiltered by the use permissions. The
 * catalog module reads it with its service token.
 *
 * @public
 */
export const mcpBrokerServerReadPermission = createPermission({
  name: 'mcp-broker.server.read',
  attributes: { action: 'read' },
});

/**
 * Read who uses a server and how much (`GET /api/mcp-broker/usage/servers` and
 * `/usage/servers/:server`, docs/contracts/mcp-access.md §7.3). A resource permission on
 * `mcp-broker-server` (resource ref: the server name): policies give owners their own servers
 * with `IS_SERVER_OWNER`, admins every server.
 *
 * @public
 */
export const mcpBrokerUsageReadPermission = createPermission({
  name: 'mcp-broker.usage.read',
  attributes: { action: 'read' },
  resourceType: MCP_BROKER_SERVER_RESOURCE_TYPE,
});

/**
 * Every `mcp-broker.*` permission, in the order the spec lists them.
 *
 * @public
 */
export const mcpBrokerPermissions = [
  mcpBrokerSessionCreatePermission,
  mcpBrokerToolUsePermission,
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
  mcpBrokerStatusReadPermission,
  mcpBrokerToolApprovePermission,
  mcpBrokerServerReadPermission,
  mcpBrokerUsageReadPermission,
];
