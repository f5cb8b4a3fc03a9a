/*
 * The "MCP server" card (contract mcp-access §8) on the `API` entities of `spec.type: mcp-server`
 * that the broker's catalog module makes (annotation `mcp.devportal.io/server` or `/endpoint`):
 * the owner, how many tools, prompts and resources the entity's definition lists, links to the
 * MCP tools page (scrolled to the server) and, for people who may read its usage (owners,
 * `mcp-broker.usage.read` on the server), to who uses it; then the products offering it
 * (McpServerProducts). Everything comes from the entity itself but the products, which the
 * portal answers. An `mcp-server` entity of another source (no broker annotation) gets no card:
 * the broker does not serve it.
 */
import type { Entity } from '@backstage/catalog-model';
import { Card, CardBody, CardHeader, Flex, Link, Text } from '@backstage/ui';
import type { McpTarget } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import {
  entityOwnerOf,
  mcpTargetOfEntity,
  offerOf,
  type McpServerOffer,
} from '../../hooks/useMcpServerEntity';
import { shortEntityRef } from '../shared/format';
import { McpServerUsageLink } from '../shared/McpServerUsageLink';
import { PortalStyles } from '../shared/PortalStyles';
import { McpTargetBadge, targetKindText } from '../McpProduct/McpServerSection';
import { portalPaths, PortalPathsProvider } from '../PortalPage/portalPaths';
import { McpServerProducts } from './McpServerProducts';

/** The `spec.type` of the catalog's MCP servers and endpoints. */
const MCP_SERVER_TYPE = 'mcp-server';

/**
 * Whether the "MCP server" card belongs on an entity: an `API` of `spec.type: mcp-server` that
 * names a server or endpoint of the MCP broker.
 *
 * @public
 */
export function isMcpServerEntity(entity: Entity): boolean {
  return (
    entity.kind.toLowerCase() === 'api' &&
    entity.spec?.type === MCP_SERVER_TYPE &&
    mcpTargetOfEntity(entity) !== undefined
  );
}

/** Props of {@link McpServerCard}. @public */
export interface McpServerCardProps {
  /** An `API` entity of `spec.type: mcp-server` made by the broker's catalog module. */
  entity: Entity;
  /** Where the portal page is mounted (links to products and My keys); the app's route else. */
  portalBasePath?: string;
}

/** "3 tools · 1 prompt · 2 resources". */
export function offerCountText(offer: McpServerOffer): string {
  const count = (n: number, one: string) => `${n.toLocaleString('en')} ${one}${n === 1 ? '' : 's'}`;
  return [
    count(offer.tools.length, 'tool'),
    count(offer.prompts.length, 'prompt'),
    count(offer.resources.length + offer.resourceTemplates.length, 'resource'),
  ].join(' · ');
}

/**
 * The "MCP server" card: owner, offer, links, and the products through which people get access.
 *
 * @public
 */
export function McpServerCard(props: McpServerCardProps) {
  const links = useAppLinks();
  const target = mcpTargetOfEntity(props.entity);
  const paths =
    props.portalBasePath === undefined ? links.portal : portalPaths(props.portalBasePath);
  return (
    <PortalPathsProvider value={paths}>
      <PortalStyles />
      <Card>
        <CardHeader>
          <Text as="h2" variant="title-small" weight="bold">
            {target === undefined ? 'MCP server' : targetKindText(target)}
          </Text>
        </CardHeader>
        <CardBody>
          {target === undefined ? (
            <Text>This entity names no server of the MCP broker.</Text>
          ) : (
            <ServerSummary entity={props.entity} target={target} />
          )}
        </CardBody>
      </Card>
    </PortalPathsProvider>
  );
}

function ServerSummary(props: { entity: Entity; target: McpTarget }) {
  const { entity, target } = props;
  const links = useAppLinks();
  const owner = entityOwnerOf(entity);
  const offer = offerOf(entity);
  const server = target.kind === 'MCPServer' ? target.name : undefined;
  return (
    <Flex direction="column" gap="4">
      <Flex direction="column" gap="1">
        <McpTargetBadge target={target} />
        <Text>
          Owner:{' '}
          {owner === undefined ? (
            'none named'
          ) : (
            <Link href={links.entity(owner)}>{shortEntityRef(owner)}</Link>
          )}
        </Text>
        <Text aria-label="What it offers">{offerCountText(offer)}</Text>
      </Flex>
      <nav aria-label={`Links for ${target.name}`}>
        <Flex gap="4" style={{ flexWrap: 'wrap' }}>
          <Link href={server === undefined ? links.mcpTools : links.mcpServer(server)}>
            Open in MCP tools
          </Link>
          <McpServerUsageLink target={target} />
        </Flex>
      </nav>
      <McpServerProducts target={target} toolNames={offer.tools.map(tool => tool.name)} />
    </Flex>
  );
}
