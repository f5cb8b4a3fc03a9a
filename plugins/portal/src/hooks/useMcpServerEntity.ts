/*
 * The catalog entities of MCP servers and endpoints (contract mcp-access §2.5): every one the
 * person may see (the sources of a new MCP product), and the one of an MCP product's target — the
 * `API` entity of type `mcp-server` whose annotation `mcp.devportal.io/server` (or `/endpoint`)
 * names the target, and the offer its definition lists. Found by the annotation rather than by
 * recomputing the entity's name, so a hashed long name needs no SHA-256 in the browser. An
 * entity the person may not see in the catalog reads as a missing one; a definition that does
 * not parse lists nothing (the page still links to the entity).
 */
import { stringifyEntityRef, type Entity } from '@backstage/catalog-model';
import { useApi } from '@backstage/frontend-plugin-api';
import { catalogApiRef } from '@backstage/plugin-catalog-react';
import type {
  McpPromptDefinition,
  McpResourceDefinition,
  McpResourceTemplateDefinition,
  McpToolDefinition,
} from '@devportal/plugin-mcp-broker-common';
import {
  MCP_ENDPOINT_ANNOTATION,
  MCP_SERVER_ANNOTATION,
  type McpTarget,
} from '@devportal/plugin-portal-common';
import { useAsyncData, type AsyncData } from './useAsyncData';

/** What a server's entity offers, from its definition. */
export interface McpServerOffer {
  tools: McpToolDefinition[];
  prompts: McpPromptDefinition[];
  resources: McpResourceDefinition[];
  resourceTemplates: McpResourceTemplateDefinition[];
}

/** A target's entity: its ref, title and offer; `null` when the catalog has none. */
export type McpServerEntity = {
  entityRef: string;
  title: string;
  owner?: string;
  offer: McpServerOffer;
} | null;

const list = <T>(value: unknown): T[] => (Array.isArray(value) ? (value as T[]) : []);

/** The offer an entity's `spec.definition` lists (empty lists when it does not parse). */
export function offerOf(entity: Entity): McpServerOffer {
  let definition: Record<string, unknown> = {};
  try {
    const parsed = JSON.parse(String(entity.spec?.definition ?? '{}'));
    if (parsed !== null && typeof parsed === 'object') definition = parsed;
  } catch {
    // Not JSON: nothing to list.
  }
  return {
    tools: list(definition.tools),
    prompts: list(definition.prompts),
    resources: list(definition.resources),
    resourceTemplates: list(definition.resourceTemplates),
  };
}

/** The broker's server or endpoint an entity stands for, from its annotation. */
export function mcpTargetOfEntity(entity: Entity): McpTarget | undefined {
  const annotations = entity.metadata.annotations ?? {};
  const server = annotations[MCP_SERVER_ANNOTATION];
  if (server !== undefined) return { kind: 'MCPServer', name: server };
  const endpoint = annotations[MCP_ENDPOINT_ANNOTATION];
  if (endpoint !== undefined) return { kind: 'MCPEndpoint', name: endpoint };
  return undefined;
}

/** The owner an entity names in `spec.owner`, when it names one. */
export function entityOwnerOf(entity: Entity): string | undefined {
  return typeof entity.spec?.owner === 'string' ? entity.spec.owner : undefined;
}

/** Reads the entity of `target` from the catalog. */
export function useMcpServerEntity(target: McpTarget): AsyncData<McpServerEntity> {
  const catalog = useApi(catalogApiRef);
  const annotation = target.kind === 'MCPServer' ? MCP_SERVER_ANNOTATION : MCP_ENDPOINT_ANNOTATION;
  return useAsyncData(async () => {
    const { items } = await catalog.getEntities({
      filter: {
        kind: 'API',
        'spec.type': 'mcp-server',
        [`metadata.annotations.${annotation}`]: target.name,
      },
    });
    const entity = items[0];
    if (entity === undefined) return null;
    return {
      entityRef: stringifyEntityRef(entity),
      title: entity.metadata.title ?? target.name,
      owner: entityOwnerOf(entity),
      offer: offerOf(entity),
    };
  }, [catalog, annotation, target.name]);
}

/** A server (or endpoint) the catalog lists, as a product's source. */
export interface McpServerChoice {
  target: McpTarget;
  entityRef: string;
  title: string;
  /** The entity's owner: the owner every product on it gets. */
  owner?: string;
  /** The server's own tool names (for the plan editor's suggestions). */
  toolNames: string[];
}

/** Every MCP server and endpoint in the catalog (the person's view of it). */
export function useMcpServerChoices(): AsyncData<McpServerChoice[]> {
  const catalog = useApi(catalogApiRef);
  return useAsyncData(async () => {
    const { items } = await catalog.getEntities({
      filter: { kind: 'API', 'spec.type': 'mcp-server' },
    });
    return items.flatMap((entity): McpServerChoice[] => {
      const target = mcpTargetOfEntity(entity);
      if (target === undefined) return [];
      return [
        {
          target,
          entityRef: stringifyEntityRef(entity),
          title: entity.metadata.title ?? target.name,
          owner: entityOwnerOf(entity),
          toolNames: offerOf(entity).tools.map(tool => tool.name),
        },
      ];
    });
  }, [catalog]);
}
