/*
 * The broker's description of each server for the catalog (contract mcp-access §2.5–§2.6): what
 * the server offers as this replica holds it (its cached lists, unfiltered by permissions), its
 * owner and where its entry came from. Built only from the server's lists and its config entry's
 * name, prefix, owner and source: a URL, header or identity setting never enters a description.
 * A name that another server's item already holds is listed with `hiddenBy` (the clash rules of
 * B§2). Endpoints do not exist yet, so every description is of kind `server`.
 */
import type {
  McpPromptDefinition,
  McpResourceDefinition,
  McpResourceTemplateDefinition,
  McpServerDescription,
  McpServerSource,
  McpToolDefinition,
} from '@devportal/plugin-mcp-broker-common';
import type { BrokerServerConfig, ServerSource } from '../config';
import { prefixedName, type NameClash } from './AggregatedCatalog';
import { recordField as record, textField as text } from './itemFields';
import type { McpBroker } from './McpBroker';

/** Drops `undefined` members, so that descriptions compare and serialise alike. */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(
    Object.entries(value).filter(([, member]) => member !== undefined),
  ) as T;
}

/** Only the registration's namespace and name: its uid and profile are nobody's business here. */
function publicSource(source: ServerSource | undefined): McpServerSource {
  return source?.type === 'kubernetes'
    ? { type: 'kubernetes', namespace: source.namespace, name: source.name }
    : { type: 'config' };
}

/** Every server this replica has, in priority (config) order. */
export function describeServers(broker: McpBroker): McpServerDescription[] {
  const clashes = broker.status().clashes;
  return broker.serverList().map(server => describe(broker, server, clashes));
}

/** One server by name; undefined when the broker has none of that name. */
export function describeServer(broker: McpBroker, name: string): McpServerDescription | undefined {
  const server = broker.server(name);
  return server && describe(broker, server, broker.status().clashes);
}

function describe(
  broker: McpBroker,
  server: BrokerServerConfig,
  clashes: readonly NameClash[],
): McpServerDescription {
  const connection = broker.connection(server.name);
  const lists = connection?.cachedLists ?? {
    tools: [],
    prompts: [],
    resources: [],
    resourceTemplates: [],
  };
  const hiddenBy = (kind: NameClash['kind'], name: string) =>
    clashes.find(c => c.kind === kind && c.name === name && c.hidden === server.name)?.owner;
  /** Name, broker name, title and description of a tool or prompt; undefined without a name. */
  const named = (kind: 'tool' | 'prompt', item: Record<string, unknown>) => {
    const name = text(item.name);
    if (name === undefined) return undefined;
    const brokerName = prefixedName(server, name);
    return {
      name,
      brokerName,
      title: text(item.title),
      description: text(item.description),
      hiddenBy: hiddenBy(kind, brokerName),
    };
  };
  /** What resources and resource templates share. */
  const labels = (item: Record<string, unknown>) => ({
    name: text(item.name),
    title: text(item.title),
    description: text(item.description),
    mimeType: text(item.mimeType),
  });
  const tools = lists.tools.flatMap((tool): McpToolDefinition[] => {
    const base = named('tool', tool);
    if (base === undefined) return [];
    return [
      defined({
        ...base,
        annotations: record(tool.annotations),
        inputSchema: record(tool.inputSchema),
        outputSchema: record(tool.outputSchema),
      }),
    ];
  });
  const prompts = lists.prompts.flatMap((prompt): McpPromptDefinition[] => {
    const base = named('prompt', prompt);
    if (base === undefined) return [];
    const args = Array.isArray(prompt.arguments) ? prompt.arguments : undefined;
    return [defined({ ...base, arguments: args })];
  });
  const resources = lists.resources.flatMap((resource): McpResourceDefinition[] => {
    const uri = text(resource.uri);
    if (uri === undefined) return [];
    return [defined({ uri, ...labels(resource), hiddenBy: hiddenBy('resource', uri) })];
  });
  const resourceTemplates = lists.resourceTemplates.flatMap(
    (template): McpResourceTemplateDefinition[] => {
      const uriTemplate = text(template.uriTemplate);
      if (uriTemplate === undefined) return [];
      const hidden = hiddenBy('resourceTemplate', uriTemplate);
      return [defined({ uriTemplate, ...labels(template), hiddenBy: hidden })];
    },
  );
  return defined({
    server: server.name,
    kind: 'server' as const,
    toolPrefix: server.toolPrefix,
    owner: server.owner,
    source: publicSource(server.source),
    state: connection?.status().state ?? 'connecting',
    tools,
    prompts,
    resources,
    resourceTemplates,
  });
}
