/* The "MCP server" card on the entity page of the new frontend system. */
import { useEntity } from '@backstage/plugin-catalog-react';
import { McpServerCard } from './McpServerCard';

/** The card for the entity of the surrounding entity page (links resolved by the app). */
export function EntityMcpServerCard() {
  const { entity } = useEntity();
  return <McpServerCard entity={entity} />;
}
