/*
 * GET /catalog (`getCatalog` of `brokerOperations`): the tools, prompts, resources and resource templates the caller may use, grouped
 * by the server that serves them (what the portal's MCP page shows a person). The decisions are
 * the MCP lists' own (BrokerAccessControl, per principal and catalog version): a denied item is
 * absent here exactly as from `tools/list`. Like every MCP request it needs
 * `mcp-broker.session.create` (403 naming it otherwise). It also lists the curated endpoints
 * (spec §13) through which the caller sees at least one tool: the person's view narrowed to each.
 */
import { NotAllowedError } from '@backstage/errors';
import {
  mcpBrokerSessionCreatePermission,
  type McpBrokerCatalog,
  type McpCatalogEndpoint,
  type McpServerCatalog,
} from '@devportal/plugin-mcp-broker-common';
import { recordField as record, textField as text } from '../broker/itemFields';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { CuratedEndpoints } from '../endpoints/CuratedEndpoints';
import type { PrincipalAccess } from '../permissions/BrokerAccessControl';
import { accessOf, PrincipalAccessDeps } from './principalAccess';
import type { OperationHandler } from './bindBrokerOperation';

/** Dependencies of {@link catalogHandler}. */
export interface CatalogHandlerDeps extends PrincipalAccessDeps {
  /** The curated endpoints (spec §13); none by default. */
  endpoints?: Pick<CuratedEndpoints, 'list'>;
}

/** Answers the caller's permitted catalog, grouped by server, and the endpoints they may use. */
export function catalogHandler(deps: CatalogHandlerDeps): OperationHandler<'getCatalog'> {
  return async ({ req, res }) => {
    const access = await accessOf(deps, req, res);
    if (!access.mayCreateSession) {
      throw new NotAllowedError(
        `Listing the MCP broker's tools needs the permission ${mcpBrokerSessionCreatePermission.name}`,
      );
    }
    const catalog = catalogByServer(access.catalog);
    if (deps.endpoints !== undefined) catalog.endpoints = usableEndpoints(deps.endpoints, access);
    return catalog;
  };
}

/** The endpoints through which `access` sees at least one tool, in config order. */
function usableEndpoints(
  endpoints: Pick<CuratedEndpoints, 'list'>,
  access: PrincipalAccess,
): McpCatalogEndpoint[] {
  return endpoints.list().flatMap(endpoint => {
    const tools = endpoint.narrowAccess(access).catalog.tools.length;
    if (tools === 0) return [];
    return [
      {
        name: endpoint.name,
        title: endpoint.serverInfo.title,
        ...(endpoint.instructions === undefined ? {} : { instructions: endpoint.instructions }),
        tools,
      },
    ];
  });
}

/** Groups a principal's permitted lists by the server that serves each item (first-seen order). */
export function catalogByServer(catalog: PermittedCatalog): McpBrokerCatalog {
  const servers = new Map<string, McpServerCatalog>();
  const serverEntry = (server: string): McpServerCatalog => {
    let entry = servers.get(server);
    if (entry === undefined) {
      entry = { server, tools: [], prompts: [], resources: [], resourceTemplates: [] };
      servers.set(server, entry);
    }
    return entry;
  };
  for (const tool of catalog.tools) {
    const name = String(tool.name);
    const server = catalog.routeTool(name)?.backend;
    if (server === undefined) continue;
    serverEntry(server).tools.push({
      name,
      title: text(tool.title),
      description: text(tool.description),
      annotations: record(tool.annotations),
    });
  }
  for (const prompt of catalog.prompts) {
    const name = String(prompt.name);
    const server = catalog.routePrompt(name)?.backend;
    if (server === undefined) continue;
    serverEntry(server).prompts.push({
      name,
      title: text(prompt.title),
      description: text(prompt.description),
      arguments: Array.isArray(prompt.arguments)
        ? prompt.arguments.flatMap(argument => {
            const item = record(argument);
            const argumentName = text(item?.name);
            return argumentName === undefined
              ? []
              : [
                  {
                    name: argumentName,
                    description: text(item?.description),
                    required: item?.required === true,
                  },
                ];
          })
        : undefined,
    });
  }
  for (const resource of catalog.resources) {
    const uri = String(resource.uri);
    const server = catalog.routeResource(uri);
    if (server === undefined) continue;
    serverEntry(server).resources.push({
      uri,
      name: text(resource.name),
      title: text(resource.title),
      description: text(resource.description),
      mimeType: text(resource.mimeType),
    });
  }
  for (const template of catalog.resourceTemplates) {
    const uriTemplate = String(template.uriTemplate);
    const server = catalog.templateServer(uriTemplate);
    if (server === undefined) continue;
    serverEntry(server).resourceTemplates.push({
      uriTemplate,
      name: text(template.name),
      title: text(template.title),
      description: text(template.description),
      mimeType: text(template.mimeType),
    });
  }
  return { servers: [...servers.values()] };
}
