/* The "MCP server" card on a legacy-system entity page. */
import { useEntity } from '@backstage/plugin-catalog-react';
import { McpServerCard } from './McpServerCard';

/** The card for the entity of the surrounding entity page (portal page at `portalBasePath`). */
export function LegacyEntityMcpServerCard(props: { portalBasePath?: string }) {
  const { entity } = useEntity();
  return <McpServerCard entity={entity} portalBasePath={props.portalBasePath ?? '/portal'} />;
}
