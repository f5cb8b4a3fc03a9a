/*
 * Registers the broker's permissions, its four resource types and their rules with
 * Backstage (coreServices.permissionsRegistry), so that they are listed at
 * /api/mcp-broker/.well-known/backstage/permissions/metadata and policies (the RBAC plugin's
 * CSV, UI and conditional policies) can grant them.
 *
 * `getResources` answers the framework's apply-conditions endpoint from the current catalog:
 * a resource ref `<server>:<own name or URI>` that no backend lists is unknown (undefined). A
 * server resource (`mcp-broker-server`, ref: the server name) is `{server, owner}` from the
 * current server set, undefined for a name no server has.
 */
import type { PermissionsRegistryService } from '@backstage/backend-plugin-api';
import {
  mcpBrokerPermissions,
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
  mcpBrokerToolUsePermission,
  mcpBrokerUsageReadPermission,
  parseMcpBrokerResourceRef,
} from '@devportal/plugin-mcp-broker-common';
import type { AggregatedCatalog } from '../broker/AggregatedCatalog';
import { brokerUiUri } from '../protocol/uiResourceUris';
import {
  BrokerItemResource,
  BrokerRules,
  BrokerServerResource,
  BrokerToolResource,
  promptResourceRef,
  resourceResourceRef,
  serverResourceRef,
  toolResourceRef,
} from './rules';

/**
 * Registers permissions, resource types and `rules` (the ones the broker applies itself);
 * `catalog` gives the current catalog, `serverOf` a configured server as the rules see it.
 */
export function registerBrokerPermissions(
  registry: PermissionsRegistryService,
  catalog: () => AggregatedCatalog,
  rules: BrokerRules,
  serverOf: (name: string) => BrokerServerResource | undefined,
): void {
  // `mcp-broker.usage.read` first: RBAC 6.1.0 turns a conditional policy's action into a
  // permission by taking the plugin's first resource permission with that action, whatever its
  // resource type, and both usage.read and resource.read have `read`. Listed first, the owners'
  // `mcp-broker-server` / `read` policy (examples/rbac-conditional-policies.yaml) maps to it; a
  // conditional `read` policy on `mcp-broker-resource` cannot be written for RBAC 6.1.0 (README).
  registry.addPermissions([
    mcpBrokerUsageReadPermission,
    ...mcpBrokerPermissions.filter(permission => permission !== mcpBrokerUsageReadPermission),
  ]);
  registry.addResourceType({
    resourceRef: toolResourceRef,
    permissions: [mcpBrokerToolUsePermission],
    rules: rules.tool,
    getResources: async refs => refs.map(ref => findTool(catalog(), ref)),
  });
  registry.addResourceType({
    resourceRef: promptResourceRef,
    permissions: [mcpBrokerPromptUsePermission],
    rules: rules.prompt,
    getResources: async refs => refs.map(ref => findPrompt(catalog(), ref)),
  });
  registry.addResourceType({
    resourceRef: resourceResourceRef,
    permissions: [mcpBrokerResourceReadPermission],
    rules: rules.resource,
    getResources: async refs => refs.map(ref => findResource(catalog(), ref)),
  });
  registry.addResourceType({
    resourceRef: serverResourceRef,
    permissions: [mcpBrokerUsageReadPermission],
    rules: rules.server,
    getResources: async refs => refs.map(serverOf),
  });
}

function findTool(catalog: AggregatedCatalog, ref: string): BrokerToolResource | undefined {
  const found = findListed(catalog.tools, ref, name => catalog.routeTool(name));
  if (found === undefined) return undefined;
  const annotations = found.item.annotations;
  return typeof annotations === 'object' && annotations !== null && !Array.isArray(annotations)
    ? { ...found.ref, annotations: annotations as Record<string, unknown> }
    : found.ref;
}

function findPrompt(catalog: AggregatedCatalog, ref: string): BrokerItemResource | undefined {
  return findListed(catalog.prompts, ref, name => catalog.routePrompt(name))?.ref;
}

/** The listed tool or prompt a ref names (by its server and own name), with the parsed ref. */
function findListed(
  items: readonly Record<string, unknown>[],
  ref: string,
  routeOf: (name: string) => { backend: string; originalName: string } | undefined,
): { ref: BrokerItemResource; item: Record<string, unknown> } | undefined {
  const wanted = parseMcpBrokerResourceRef(ref);
  if (wanted === undefined) return undefined;
  const item = items.find(candidate => {
    const route = typeof candidate.name === 'string' ? routeOf(candidate.name) : undefined;
    return route?.backend === wanted.server && route.originalName === wanted.name;
  });
  return item === undefined ? undefined : { ref: wanted, item };
}

function findResource(catalog: AggregatedCatalog, ref: string): BrokerItemResource | undefined {
  const wanted = parseMcpBrokerResourceRef(ref);
  if (wanted === undefined) return undefined;
  // A ref names the backend's own URI; the catalog knows UI URIs in the broker's form.
  const shown = brokerUiUri(wanted.server, wanted.name);
  const listed =
    catalog.resolveResource(shown)?.backend === wanted.server ||
    catalog.templateOwner(shown) === wanted.server;
  return listed ? wanted : undefined;
}
