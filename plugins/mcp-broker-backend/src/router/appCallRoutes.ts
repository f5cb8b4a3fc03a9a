/*
 * An MCP App's call of its own server's tool, and its read of its own server's UI resource
 * (docs/contracts/tasks-and-apps.md §3.6). An app
 * calls a tool by the name its server registered (`get-time`); its host proxies the call to the
 * broker, where the tool is `vanilla_get-time`. When a `tools/call` of a client that declared
 * `io.modelcontextprotocol/ui` names no broker tool, the name is resolved, in this order:
 * 1. by the origin hint: `params._meta.ui.resourceUri` holding the view's broker UI URI
 *    (`ui://<server>/…`, which a host may add when it proxies an app's call) narrows the
 *    candidates to that server — a hint never falls back to other servers, and a hint that is
 *    not a broker UI URI is ignored;
 * 2. else by uniqueness among all servers.
 * The candidates are the tools of app servers that apps may call and the person may use
 * (PermittedCatalog.appToolsNamed): one → routed there under the backend's own name; none →
 * unknown, as before; several → a `-32602` that names the broker names to use. The broker never
 * guesses: two views proxied verbatim send identical requests, and a wrong guess could run a
 * destructive tool of the wrong server.
 *
 * The hint is routing, never authorization: the resolved tool passes the same permission as its
 * broker name (it comes from the permitted catalog), and a hint can only narrow. It is also how
 * the broker restores a host's per-server block of app-only tools (§3.5): a hinted call to an
 * app-only tool of another server is unknown. The hint is removed before the call is forwarded.
 *
 * An app's `resources/read` of an unqualified `ui://` URI (its server's own, e.g.
 * `ui://get-time/mcp-app.html`) resolves the same way among the servers that list it or have a
 * template matching it and whose resource the person may read.
 */
import { isPlainObject, JsonRpcErrorCode, type JsonRpcErrorObject } from '../protocol/jsonRpc';
import { qualifiedUiUri } from '../protocol/uiResourceUris';
import type { PermittedCatalog } from '../permissions/PermittedCatalog';
import type { McpRoute } from './mcpRequest';

/** How an app's call (or read) by its server's own name (or URI) was resolved. */
export type AppCallResolution =
  | { readonly route: McpRoute }
  | {
      /** The broker names (URIs) of the items it could mean, sorted. */
      readonly candidates: readonly string[];
      /** Their servers, in the order of `candidates`. */
      readonly servers: readonly string[];
    };

/** The origin hint of a `tools/call` (`params._meta.ui.resourceUri`), whatever it holds. */
function originHintOf(params: Record<string, unknown>): unknown {
  const meta = params._meta;
  return isPlainObject(meta) && isPlainObject(meta.ui) ? meta.ui.resourceUri : undefined;
}

/** The configured server a call's origin hint names; undefined without a usable hint. */
export function appOriginOf(
  catalog: PermittedCatalog,
  params: Record<string, unknown>,
): string | undefined {
  return catalog.uiUriServer(originHintOf(params));
}

/**
 * Resolves a tool name that is not a broker name as an app's call of its server's own tool (see
 * the file comment); undefined when no tool the person may use matches.
 */
export function resolveAppTool(
  catalog: PermittedCatalog,
  name: string,
  params: Record<string, unknown>,
): AppCallResolution | undefined {
  const origin = appOriginOf(catalog, params);
  const tools = catalog
    .appToolsNamed(name)
    .filter(tool => origin === undefined || tool.backend === origin);
  if (tools.length === 0) return undefined;
  if (tools.length > 1) {
    const sorted = [...tools].sort((a, b) => a.brokerName.localeCompare(b.brokerName));
    return {
      candidates: sorted.map(tool => tool.brokerName),
      servers: sorted.map(tool => tool.backend),
    };
  }
  const [tool] = tools;
  return {
    route: {
      backend: tool.backend,
      name: tool.originalName,
      ...(tool.paramHeaders === undefined ? {} : { paramHeaders: tool.paramHeaders }),
      appCall: origin === undefined ? { resolution: 'unique' } : { resolution: 'hint', origin },
    },
  };
}

/**
 * Resolves a `ui://` URI that names no server as an app's read of its server's own UI resource
 * (see the file comment); undefined when no resource the person may read matches.
 */
export function resolveAppResource(
  catalog: PermittedCatalog,
  uri: string,
  params: Record<string, unknown>,
): AppCallResolution | undefined {
  const origin = appOriginOf(catalog, params);
  const uris = catalog
    .appResourceUris(uri)
    .filter(brokerUri => origin === undefined || catalog.uiUriServer(brokerUri) === origin);
  if (uris.length > 1) {
    const candidates = [...uris].sort();
    return { candidates, servers: candidates.map(brokerUri => catalog.uiUriServer(brokerUri)!) };
  }
  const route = uris.length === 1 ? catalog.resolveResource(uris[0]) : undefined;
  if (route === undefined) return undefined;
  return {
    route: {
      backend: route.backend,
      name: route.uri,
      appCall: origin === undefined ? { resolution: 'unique' } : { resolution: 'hint', origin },
    },
  };
}

/** The route of a resolution, if it found one item. */
export function routeOf(resolution: AppCallResolution | undefined): McpRoute | undefined {
  return resolution !== undefined && 'route' in resolution ? resolution.route : undefined;
}

/** The several items of a resolution, if it found more than one. */
export function ambiguityOf(resolution: AppCallResolution | undefined) {
  return resolution !== undefined && 'candidates' in resolution ? resolution : undefined;
}

/** The `-32602` error for an app's call that several servers' tools could serve. */
export function ambiguousAppTool(
  name: string,
  ambiguity: Extract<AppCallResolution, { candidates: readonly string[] }>,
) {
  return ambiguous(
    `Tool "${name.slice(0, 200)}"`,
    ambiguity,
    'call it by its broker name',
    'ambiguous-app-tool',
  );
}

/** The `-32602` error for an app's read that several servers' UI resources could serve. */
export function ambiguousAppResource(
  uri: string,
  ambiguity: Extract<AppCallResolution, { candidates: readonly string[] }>,
) {
  return ambiguous(
    `Resource "${uri.slice(0, 200)}"`,
    ambiguity,
    'read it by its broker URI',
    'ambiguous-app-resource',
  );
}

function ambiguous(
  subject: string,
  ambiguity: Extract<AppCallResolution, { candidates: readonly string[] }>,
  advice: string,
  reason: string,
): JsonRpcErrorObject {
  const servers = ambiguity.servers.map(server => `"${server}"`);
  const names = ambiguity.candidates.map(candidate => `"${candidate}"`);
  const both = servers.length === 2 ? 'both' : 'all';
  return {
    code: JsonRpcErrorCode.InvalidParams,
    message:
      `${subject} is ambiguous: MCP servers ${enumeration(servers, 'and')} ${both} have it; ` +
      `${advice} (${enumeration(names, 'or')})`,
    data: { reason, candidates: ambiguity.candidates },
  };
}

/** `a`, `a and b`, `a, b and c` (with `or` in place of `and` as asked). */
function enumeration(items: readonly string[], last: 'and' | 'or'): string {
  return items.length < 2
    ? items.join('')
    : `${items.slice(0, -1).join(', ')} ${last} ${items[items.length - 1]}`;
}

/**
 * `params` without the origin hint when it holds a broker UI URI (the backend never sees the
 * broker's names); `params` itself otherwise.
 */
export function withoutAppOriginHint(
  params: Record<string, unknown>,
  isServer: (name: string) => boolean,
): Record<string, unknown> {
  const meta = params._meta;
  if (!isPlainObject(meta) || !isPlainObject(meta.ui)) return params;
  const hint = meta.ui.resourceUri;
  if (typeof hint !== 'string' || qualifiedUiUri(hint, isServer) === undefined) return params;
  const { resourceUri: _hint, ...ui } = meta.ui;
  const { ui: _ui, ...rest } = meta;
  const stripped = Object.keys(ui).length === 0 ? rest : { ...rest, ui };
  const { _meta: _old, ...paramsRest } = params;
  return Object.keys(stripped).length === 0 ? paramsRest : { ...paramsRest, _meta: stripped };
}
