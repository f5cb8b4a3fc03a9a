/*
 * What an MCP product's server or endpoint offers (contract mcp-access §8): a badge "MCP server
 * example" linking to its catalog entity, and the tools (with annotation badges), prompts and
 * resources its entity's definition lists — the offer, not what one person may use. A target
 * with no entity gets the warning that new requests are refused.
 */
import { Alert, Flex, Link, Text } from '@backstage/ui';
import type { McpTarget } from '@devportal/plugin-portal-common';
import { useAppLinks } from '../../hooks/useAppLinks';
import type { McpServerEntity } from '../../hooks/useMcpServerEntity';
import type { AsyncData } from '../../hooks/useAsyncData';
import { annotationLabels, CatalogSection, resourceEntries } from '../shared/McpCatalogSection';
import { ErrorState, LoadingState } from '../shared/StateViews';

/** `MCP server` or `MCP endpoint`. */
export function targetKindText(target: McpTarget): string {
  return target.kind === 'MCPServer' ? 'MCP server' : 'MCP endpoint';
}

/** The badge naming the target, a link to its entity once that is known. */
export function McpTargetBadge(props: { target: McpTarget; entityRef?: string }) {
  const links = useAppLinks();
  const text = (
    <>
      {targetKindText(props.target)} <em>{props.target.name}</em>
    </>
  );
  return props.entityRef === undefined ? (
    <Text weight="bold">{text}</Text>
  ) : (
    <Link href={links.entity(props.entityRef)} weight="bold">
      {text}
    </Link>
  );
}

/** Props of {@link McpServerSection}. */
export interface McpServerSectionProps {
  target: McpTarget;
  entity: AsyncData<McpServerEntity>;
}

/** The target's tools, prompts and resources, or why they cannot be shown. */
export function McpServerSection(props: McpServerSectionProps) {
  const { target, entity } = props;
  if (entity.value === undefined && entity.loading) {
    return <LoadingState what={`the ${targetKindText(target)}'s tools`} />;
  }
  if (entity.error !== undefined) {
    return <ErrorState title="Could not read the catalog" error={entity.error} />;
  }
  if (entity.value === null || entity.value === undefined) {
    return (
      <Alert
        status="warning"
        icon
        title={`${targetKindText(target)} ${target.name} is not in the catalog; new requests are refused`}
        description="The broker publishes its servers in the catalog within seconds of adding them; ask the product's owners if it does not come back."
      />
    );
  }
  const { offer } = entity.value;
  const label = `${targetKindText(target)} ${target.name}`;
  return (
    <Flex direction="column" gap="3">
      <CatalogSection
        kind="Tools"
        server={label}
        emptyText="It lists no tools now."
        entries={offer.tools.map(tool => ({
          id: tool.brokerName,
          name: tool.brokerName,
          title: tool.title,
          description: tool.description,
          labels: annotationLabels(tool.annotations),
        }))}
      />
      <CatalogSection
        kind="Prompts"
        server={label}
        entries={offer.prompts.map(prompt => ({
          id: prompt.brokerName,
          name: prompt.brokerName,
          title: prompt.title,
          description: prompt.description,
        }))}
      />
      <CatalogSection
        kind="Resources"
        server={label}
        entries={resourceEntries(offer.resources, offer.resourceTemplates)}
      />
    </Flex>
  );
}
