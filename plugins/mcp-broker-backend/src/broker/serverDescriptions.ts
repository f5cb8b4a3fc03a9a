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
import type { NameClash } from './AggregatedCatalog';
import type { McpBroker } from './McpBroker';

const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : undefined;
const record = (value: unknown): Record<string, unknown> | undefined =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;

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
  const tools = lists.tools.flatMap((tool): McpToolDefinition[] => {
    const name = text(tool.name);
    if (name === undefined) return [];
    const brokerName = `${server.toolPrefix}${name}`;
    return [
      defined({
        name,
        brokerName,
        title: text(tool.title),
        description: text(tool.description),
        annotations: record(tool.annotations),
        inputSchema: record(tool.inputSchema),
        outputSchema: record(tool.outputSchema),
        hiddenBy: hiddenBy('tool', brokerName),
      }),
    ];
  });
  const prompts = lists.prompts.flatMap((prompt): McpPromptDefinition[] => {
    const name = text(prompt.name);
    if (name === undefined) return [];
    const brokerName = `${server.toolPrefix}${name}`;
    return [
      defined({
        name,
        brokerName,
        title: text(prompt.title),
        description: text(prompt.description),
        arguments: Array.isArray(prompt.arguments) ? prompt.arguments : undefined,
        hiddenBy: hiddenBy('prompt', brokerName),
      }),
    ];
  });
  const resources = lists.resources.flatMap((resource): McpResourceDefinition[] => {
    const uri = text(resource.uri);
    if (uri === undefined) return [];
    return [
      defined({
        uri,
        name: text(resource.name),
        title: text(resource.title),
        description: text(resource.description),
        mimeType: text(resource.mimeType),
        hiddenBy: hiddenBy('resource', uri),
      }),
    ];
  });
  const resourceTemplates = lists.resourceTemplates.flatMap(
    (template): McpResourceTemplateDefinition[] => {
      const uriTemplate = text(template.uriTemplate);
      if (uriTemplate === undefined) return [];
      return [
        defined({
          uriTemplate,
          name: text(template.name),
          title: text(template.title),
          description: text(template.description),
          mimeType: text(template.mimeType),
          hiddenBy: hiddenBy('resourceTemplate', uriTemplate),
        }),
      ];
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
