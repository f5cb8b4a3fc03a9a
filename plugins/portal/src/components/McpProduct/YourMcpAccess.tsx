/*
 * The caller's own access to an MCP product (contract mcp-access §8): their access requests for
 * it and, for a live grant, "You have access (bronze, until …)" with links to the MCP tools
 * page and My MCP usage. No secret is involved: their own sign-in is the credential.
 */
import { Alert, Flex, Link, Text } from '@backstage/ui';
import type { ApiKey, ApiProduct, McpTarget } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import { formatDateTime } from '../shared/format';
import { MyProductKeys } from '../shared/MyProductKeys';
import { usePortalPaths } from '../PortalPage/portalPaths';
import { isLiveGrant } from './mcpAccess';

/** "You have access (bronze, until …)" for each live grant among `keys`. */
function LiveAccess(props: { keys: ApiKey[]; target: McpTarget }) {
  const links = useAppLinks();
  const live = props.keys.filter(key => isLiveGrant(key));
  if (live.length === 0) return null;
  const grants = live
    .map(key =>
      key.spec.expiresAt === undefined
        ? key.spec.planTier
        : `${key.spec.planTier}, until ${formatDateTime(key.spec.expiresAt)}`,
    )
    .join('; ');
  return (
    <Alert
      status="success"
      icon
      title={`You have access (${grants})`}
      description={
        <Flex gap="3" style={{ flexWrap: 'wrap' }}>
          <Link href={links.mcpServer(props.target.name)}>Your tools on MCP tools</Link>
          <Link href={links.mcpUsage}>My MCP usage</Link>
        </Flex>
      }
      mb="2"
    />
  );
}

/** The caller's access requests for an MCP product, and their live access. */
export function YourMcpAccess(props: {
  product: ApiProduct;
  target: McpTarget;
  refreshKey: number;
}) {
  const paths = usePortalPaths();
  return (
    <Flex direction="column" gap="2">
      <Text as="h3" variant="title-small" weight="bold">
        Your access
      </Text>
      <MyProductKeys
        product={props.product}
        refreshKey={props.refreshKey}
        emptyTitle="You have not requested access to this product yet"
        summary={keys => <LiveAccess keys={keys} target={props.target} />}
      />
      <Link href={paths.keys}>Manage your requests on My keys</Link>
    </Flex>
  );
}
