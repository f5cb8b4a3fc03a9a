/*
 * The link to who uses an MCP server (`/mcp/servers/:server/usage`, contract mcp-access §8), for
 * people the broker would show it to: `mcp-broker.usage.read` on that server (its owners under
 * IS_SERVER_OWNER, admins). Endpoints have no usage page of their own: nothing for them.
 */
import { Link } from '@backstage/ui';
import { mcpBrokerUsageReadPermission } from '@devportal/plugin-mcp-broker-common';
import type { McpTarget } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import { useDecision } from '../../hooks/usePermissions';

/** "Usage" of the target's server, where the caller may read it; else nothing. */
export function McpServerUsageLink(props: { target: McpTarget; children?: string }) {
  const links = useAppLinks();
  const server = props.target.kind === 'MCPServer' ? props.target.name : undefined;
  // Asked for every target (hooks run unconditionally); an endpoint's answer is not used.
  const usage = useDecision(mcpBrokerUsageReadPermission, server ?? props.target.name);
  if (server === undefined || !usage.allowed) return null;
  return <Link href={links.mcpServerUsage(server)}>{props.children ?? 'Usage'}</Link>;
}
