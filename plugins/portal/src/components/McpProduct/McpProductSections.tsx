/*
 * The parts of a product's page that an MCP product has instead of an HTTPRoute product's
 * (contract mcp-access §8): the badge naming its server (a link to the server's catalog entity),
 * what the server offers, the plans as quota tables, the caller's own access, and for the
 * product's owners the people with access. The server's entity is read once for all of them.
 */
import { Card, CardBody, CardHeader, Flex, Text } from '@backstage/ui';
import type { ApiProduct, McpTarget } from '@devportal/plugin-portal-common';
import { useMcpServerEntity } from '../../hooks/useMcpServerEntity';
import { McpServerUsageLink } from '../shared/McpServerUsageLink';
import { McpPlansTable } from './McpPlansTable';
import { McpServerSection, McpTargetBadge } from './McpServerSection';
import { mcpPlansOf } from './mcpPlans';
import { PeopleWithAccess } from './PeopleWithAccess';
import { YourMcpAccess } from './YourMcpAccess';

/** Props of {@link McpProductSections}. */
export interface McpProductSectionsProps {
  product: ApiProduct;
  target: McpTarget;
  /** Show the caller's own access (they may request access). */
  withOwnAccess: boolean;
  /** Show the people with access (the caller may manage the product). */
  withPeople: boolean;
  /** A change reloads the caller's own requests (after a new one). */
  refreshKey: number;
}

/** The MCP product's server, offer, plans, the caller's access and (owners) who has access. */
export function McpProductSections(props: McpProductSectionsProps) {
  const { product, target } = props;
  const entity = useMcpServerEntity(target);
  const toolNames = entity.value?.offer.tools.map(tool => tool.name);
  return (
    <Flex direction="column" gap="4">
      <Card>
        <CardHeader>
          <Flex direction="column" gap="1">
            <Text as="h3" variant="title-small" weight="bold">
              On offer
            </Text>
            <McpTargetBadge target={target} entityRef={entity.value?.entityRef} />
            <Text variant="body-small" color="secondary">
              No key is issued: you use the MCP broker with your own sign-in.
            </Text>
          </Flex>
        </CardHeader>
        <CardBody>
          <McpServerSection target={target} entity={entity} />
        </CardBody>
      </Card>
      <Flex direction="column" gap="2">
        <Text as="h3" variant="title-small" weight="bold">
          Plans
        </Text>
        <McpPlansTable plans={mcpPlansOf(product)} tools={toolNames} label="Plans" />
      </Flex>
      {props.withOwnAccess && (
        <YourMcpAccess product={product} target={target} refreshKey={props.refreshKey} />
      )}
      {props.withPeople && (
        <>
          <McpServerUsageLink target={target}>How much they use the server</McpServerUsageLink>
          <PeopleWithAccess product={product} />
        </>
      )}
    </Flex>
  );
}
