/*
 * The link to who uses an MCP server (`/mcp/servers/:server/usage`, contract mcp-access §8), for
 * people the broker would show it to: `mcp-broker.usage.read` on that server (its owners under
 * IS_SERVER_OWNER, admins). Endpoints have no usage page of their own: nothing for them, and no
 * permission is asked.
 */
import { Link } from '@backstage/ui';
import { mcpBrokerUsageReadPermission } from '@devportal/plugin-mcp-broker-common';
import type { McpTarget } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import { useDecision } from '../../hooks/usePermissions';

/** "Usage" of the target's server, where the caller may read it; else nothing. */
export function McpServerUsageLink(props: { target: McpTarget; children?: string }) {
  if (props.target.kind !== 'MCPServer') return null;
  return <ServerUsageLink server={props.target.name}>{props.children ?? 'Usage'}</ServerUsageLink>;
}

function ServerUsageLink(props: { server: string; children: string }) {
  const links = useAppLinks();
  const usage = useDecision(mcpBrokerUsageReadPermission, props.server);
  if (!usage.allowed) return null;
  return <Link href={links.mcpServerUsage(props.server)}>{props.children}</Link>;
}
