/*
 * A server's tools, prompts or resources as a person reads them — name, title, annotation
 * badges and the whole description (Markdown written by the server, rendered sanitized) — under
 * a heading with a count. The MCP tools page lists what a person may use with it; an MCP
 * product's page lists what its server offers.
 */
import { Badge, Flex, Text } from '@backstage/ui';
import { MarkdownText } from './MarkdownText';

/** Short labels for the MCP tool annotations a person cares about. */
export function annotationLabels(annotations: Record<string, unknown> | undefined): string[] {
  if (annotations === undefined) return [];
  const labels: string[] = [];
  if (annotations.readOnlyHint === true) labels.push('read-only');
  if (annotations.destructiveHint === true) labels.push('destructive');
  if (annotations.idempotentHint === true) labels.push('idempotent');
  if (annotations.openWorldHint === false) labels.push('closed world');
  return labels;
}

/** One tool, prompt or resource of a server's catalog. */
export interface CatalogEntry {
  id: string;
  /** What a client calls it by (shown as code). */
  name: string;
  title?: string;
  /** Markdown, from the MCP server. */
  description?: string;
  labels?: string[];
}

/** A server's resources and resource templates as entries (by URI, then template). */
export function resourceEntries(
  resources: ReadonlyArray<{ uri: string; name?: string; description?: string }>,
  templates: ReadonlyArray<{ uriTemplate: string; name?: string; description?: string }>,
): CatalogEntry[] {
  return [
    ...resources.map(r => ({ id: r.uri, name: r.uri, title: r.name, description: r.description })),
    ...templates.map(t => ({
      id: t.uriTemplate,
      name: t.uriTemplate,
      title: t.name,
      description: t.description,
    })),
  ];
}

/**
 * A server's tools, prompts or resources as a plain list: each entry with its whole
 * description, Markdown rendered safely (nothing to select or act on, so no grid).
 */
function CatalogList(props: { label: string; entries: CatalogEntry[] }) {
  return (
    <ul aria-label={props.label} style={{ listStyle: 'none', margin: 0, padding: 0 }}>
      {props.entries.map(entry => (
        <li key={entry.id} style={{ borderTop: '1px solid var(--bui-border-1)', padding: '8px 0' }}>
          <Flex direction="column" gap="1">
            <Flex gap="2" align="center" style={{ flexWrap: 'wrap' }}>
              <code style={{ overflowWrap: 'anywhere' }}>{entry.name}</code>
              {entry.title !== undefined && <Text weight="bold">{entry.title}</Text>}
              {(entry.labels ?? []).map(label => (
                <Badge key={label} size="small">
                  {label}
                </Badge>
              ))}
            </Flex>
            {entry.description !== undefined && entry.description !== '' && (
              <MarkdownText text={entry.description} />
            )}
          </Flex>
        </li>
      ))}
    </ul>
  );
}

/**
 * One kind of a server's catalog under its heading with a count; an empty kind shows
 * `emptyText`, or nothing at all without one.
 */
export function CatalogSection(props: {
  kind: 'Tools' | 'Prompts' | 'Resources';
  server: string;
  entries: CatalogEntry[];
  emptyText?: string;
}) {
  if (props.entries.length === 0 && props.emptyText === undefined) return null;
  return (
    <>
      <Text as="h3" weight="bold">
        {props.kind} ({props.entries.length})
      </Text>
      {props.entries.length === 0 ? (
        <Text color="secondary">{props.emptyText}</Text>
      ) : (
        <CatalogList label={`${props.kind} of ${props.server}`} entries={props.entries} />
      )}
    </>
  );
}
