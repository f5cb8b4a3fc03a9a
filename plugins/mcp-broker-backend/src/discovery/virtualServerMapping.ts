/*
 * An MCPVirtualServer (mcp.kuadrant.io/v1alpha1, Kuadrant's kind) as a curated endpoint
 * (docs/contracts/curated-endpoints.md §9): name `<namespace>-<name>`, `spec.tools` → the exact
 * tool names shown, `spec.description` → instructions, the annotation
 * `devportal.kuadrant.io/title` → title, and as servers those the named tools belong to.
 *
 * Trust boundary: a virtual server is written by its namespace's owners, so it may name only
 * tools of servers registered (MCPServerRegistration) in its own namespace. Which server a tool
 * belongs to is decided by tool prefix over the broker's whole server set (config servers
 * included): the server with the longest prefix of the name. A tool of any other server refuses
 * the whole resource (`ToolOutsideNamespace`); a tool no server's prefix matches refuses it
 * (`UnknownTool`) until such a server appears. Even when accepted, the endpoint's servers are its
 * namespace's only, so its selection can never reach another's server.
 */
import type { BrokerServerConfig } from '../config';
import {
  type CuratedEndpointConfig,
  isValidEndpointName,
  MAX_ENDPOINT_INSTRUCTIONS_LENGTH,
  MAX_ENDPOINT_NAME_LENGTH,
} from '../endpoints/endpointConfig';
import { derivedNameOf } from './derivedNameOf';
import type { KubeObjectLike } from './registrationTypes';

/** Annotation with the endpoint's title (`serverInfo.title`; default the endpoint name). */
export const VIRTUAL_SERVER_TITLE_ANNOTATION = 'devportal.kuadrant.io/title';

/**
 * Why a virtual server is refused, as the `reason` of its `Accepted` condition:
 * - `ToolOutsideNamespace`: it names a tool of a server not registered in its namespace;
 * - `UnknownTool`: it names a tool no server's prefix matches (yet);
 * - `Invalid`: anything else it gets wrong (no tools, a long name or description, prompts or
 *   resources the broker cannot narrow).
 */
export type VirtualServerRefusalReason = 'ToolOutsideNamespace' | 'UnknownTool' | 'Invalid';

/** Why a virtual server serves nothing (shown in logs, on /status and in its condition). */
export class VirtualServerError extends Error {
  constructor(
    message: string,
    readonly reason: VirtualServerRefusalReason = 'Invalid',
  ) {
    super(message);
  }
}

/**
 * The endpoint of `virtualServer` against the broker's current `servers`; throws a
 * {@link VirtualServerError} when it is refused.
 */
export function endpointOfVirtualServer(
  virtualServer: KubeObjectLike,
  servers: readonly BrokerServerConfig[],
): CuratedEndpointConfig {
  const namespace = virtualServer.metadata?.namespace ?? '';
  const spec = virtualServer.spec ?? {};
  const name = derivedNameOf(namespace, virtualServer.metadata?.name ?? '');
  if (!isValidEndpointName(name)) {
    throw new VirtualServerError(
      `its endpoint name "${name}" (<namespace>-<name>) is longer than ${MAX_ENDPOINT_NAME_LENGTH} characters: use a shorter name`,
    );
  }
  for (const field of ['prompts', 'resources'] as const) {
    if (spec[field] !== undefined) {
      throw new VirtualServerError(
        `spec.${field} is not supported by the Backstage MCP broker: remove it (the endpoint shows the ${field} of its tools' servers)`,
      );
    }
  }
  const tools: unknown = spec.tools;
  if (
    !Array.isArray(tools) ||
    tools.length === 0 ||
    tools.some(tool => typeof tool !== 'string' || tool === '')
  ) {
    throw new VirtualServerError('spec.tools must list at least one tool name');
  }
  const description: unknown = spec.description;
  if (description !== undefined && typeof description !== 'string') {
    throw new VirtualServerError('spec.description must be a string');
  }
  if (description !== undefined && description.length > MAX_ENDPOINT_INSTRUCTIONS_LENGTH) {
    throw new VirtualServerError(
      `spec.description is longer than ${MAX_ENDPOINT_INSTRUCTIONS_LENGTH} characters: shorten it`,
    );
  }
  const own = new Set<string>();
  for (const tool of tools as string[]) {
    own.add(ownServerOf(tool, namespace, servers).name);
  }
  const title = virtualServer.metadata?.annotations?.[VIRTUAL_SERVER_TITLE_ANNOTATION];
  return {
    name,
    title: title !== undefined && title.trim() !== '' ? title : name,
    ...(description === undefined || description.trim() === ''
      ? {}
      : { instructions: description }),
    servers: [...own].sort(),
    includeNames: [...new Set(tools as string[])],
    exclude: [],
    annotations: {},
    overrides: new Map(),
  };
}

/** The server of `namespace` that `tool` belongs to; see the file comment. */
function ownServerOf(
  tool: string,
  namespace: string,
  servers: readonly BrokerServerConfig[],
): BrokerServerConfig {
  const candidates = servers.filter(server => tool.startsWith(server.toolPrefix));
  if (candidates.length === 0) {
    throw new VirtualServerError(
      `spec.tools names "${tool}", which no server's tool prefix matches (yet): register its server in namespace ${namespace}, or correct the name`,
      'UnknownTool',
    );
  }
  const longest = Math.max(...candidates.map(server => server.toolPrefix.length));
  const owners = candidates.filter(server => server.toolPrefix.length === longest);
  const foreign = owners.find(server => !isRegisteredIn(server, namespace));
  if (foreign !== undefined) {
    throw new VirtualServerError(
      `spec.tools names "${tool}" of server "${foreign.name}", which is not registered in namespace ${namespace}: a virtual server may name only tools of MCPServerRegistrations in its own namespace; remove the tool, or register its server here`,
      'ToolOutsideNamespace',
    );
  }
  return owners[0];
}

function isRegisteredIn(server: BrokerServerConfig, namespace: string): boolean {
  return server.source?.type === 'kubernetes' && server.source.namespace === namespace;
}
