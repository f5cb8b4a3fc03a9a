/*
 * The aggregated view clients see: every backend's lists merged in config order. Tool and
 * prompt names get the backend's prefix; resource URIs stay as they are, except MCP Apps UI
 * URIs (`ui://…`), which are shown per server as `ui://<server>/…` in resources, templates and
 * tools' `_meta` (uiResourceUris.ts), so two servers' UIs never clash. Clash rule
 * (deterministic): the backend that comes first in config order owns a name or URI; later
 * backends' entries with the same name are hidden and reported as clashes on the status
 * endpoint. Immutable: a new catalog is built whenever a backend's lists change.
 *
 * Tools whose `inputSchema` breaks the `x-mcp-header` constraints are left out, as the
 * specification requires of an HTTP client (2026-07-28 `tools.mdx` §x-mcp-header), and reported
 * in `rejectedTools` (the broker logs them). The `Mcp-Param-*` declarations of every other tool
 * are read here, once per list, so that neither a call to the backend nor the check of a
 * client's headers walks a schema.
 */
import type { BackendLists } from '../backend/backendConnectionTypes';
import { scanParamHeaders, type ParamHeaderDeclaration } from '../protocol/paramHeaders';
import { isAppCallableTool, isAppOnlyTool } from '../protocol/uiExtension';
import {
  brokerUiUri,
  isUiUri,
  qualifiedUiUri,
  toolUiResourceUri,
  toolWithBrokerUiUris,
} from '../protocol/uiResourceUris';
import type { BrokerBackend } from '../types';

/** A name or URI that two backends expose; `owner` serves it, `hidden` is not reachable. */
export interface NameClash {
  kind: 'tool' | 'prompt' | 'resource' | 'resourceTemplate';
  name: string;
  owner: string;
  hidden: string;
}

/** Which backend serves a prefixed name, and under which name the backend knows it. */
export interface Route {
  backend: string;
  originalName: string;
  /** A tool's `x-mcp-header` declarations (absent when it has none). */
  paramHeaders?: readonly ParamHeaderDeclaration[];
  /** True for a tool only apps may call (`_meta.ui.visibility` without `"model"`). */
  appOnly?: true;
}

/** A tool an MCP App may call by its own name (contract §3.6), with its broker name. */
export interface AppToolRoute extends Route {
  /** The name clients see (with the server's prefix). */
  brokerName: string;
}

/** A backend tool left out of the catalog because its definition is invalid. */
export interface RejectedTool {
  backend: string;
  /** The backend's own name of the tool. */
  tool: string;
  /** What is wrong with it (which constraint its `inputSchema` breaks). */
  reason: string;
}

/** A backend tool withheld because its definition changed and is not approved (spec §13). */
export interface WithheldTool {
  backend: string;
  /** The backend's own name of the tool. */
  tool: string;
}

/** Options of {@link AggregatedCatalog.build}. */
export interface CatalogBuildOptions {
  /**
   * Whether a backend's tool (its own definition) may be served; a tool it refuses is left out
   * and listed in `withheldTools`. Default: every tool.
   */
  admitTool?: (backend: BrokerBackend, tool: Record<string, unknown>) => boolean;
}

/** The kinds of the aggregated view that clients can list. */
export type ViewKind = 'tools' | 'resources' | 'prompts';

interface TemplateRoute {
  backend: string;
  /** As clients see it (a UI template in the broker's form). */
  uriTemplate: string;
  /** As the backend lists it. */
  originalTemplate: string;
  pattern: RegExp;
}

/**
 * Which backend serves a resource URI, the URI the backend knows it by, and the name that
 * identifies it there for permissions: the backend's URI when listed (or when the only backend
 * with resources serves it unlisted, or a broker UI URI names the backend), the backend's URI
 * template when only a template covers it.
 */
export interface ResourceRoute {
  backend: string;
  name: string;
  /** The URI as the backend knows it (a broker UI URI's original; else the URI asked for). */
  uri: string;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Turns an RFC 6570 URI template into a loose matcher for routing `resources/read`. */
export function uriTemplateMatcher(template: string): RegExp {
  let source = '';
  let last = 0;
  for (const match of template.matchAll(/\{([^}]*)\}/g)) {
    source += escapeRegExp(template.slice(last, match.index));
    const operator = match[1].charAt(0);
    if (operator === '+' || operator === '#') source += '.*';
    else if (operator === '?' || operator === '&') source += '(?:[?&].*)?';
    else if (operator === '/') source += '(?:/[^?#]*)?';
    else if (operator === '.' || operator === ';') source += `(?:\\${operator}[^/?#]*)?`;
    else source += '[^/?#]*';
    last = (match.index ?? 0) + match[0].length;
  }
  source += escapeRegExp(template.slice(last));
  return new RegExp(`^${source}$`);
}

/** The name clients see for a backend's tool or prompt: its own name behind the server's prefix. */
export function prefixedName(server: { toolPrefix: string }, name: string): string {
  return `${server.toolPrefix}${name}`;
}

function toolKey(backend: string, tool: string): string {
  return `${backend}\u0000${tool}`;
}

/** The merged lists of all backends, with routing tables. */
export class AggregatedCatalog {
  private constructor(
    readonly tools: readonly Record<string, unknown>[],
    readonly prompts: readonly Record<string, unknown>[],
    readonly resources: readonly Record<string, unknown>[],
    readonly resourceTemplates: readonly Record<string, unknown>[],
    private readonly toolRoutes: ReadonlyMap<string, Route>,
    private readonly promptRoutes: ReadonlyMap<string, Route>,
    private readonly resourceRoutes: ReadonlyMap<string, string>,
    private readonly templateRoutes: readonly TemplateRoute[],
    private readonly resourceBackends: readonly string[],
    private readonly serverNames: ReadonlySet<string>,
    readonly clashes: readonly NameClash[],
    readonly rejectedTools: readonly RejectedTool[],
    readonly withheldTools: readonly WithheldTool[],
    private readonly toolParamHeaders: ReadonlyMap<string, readonly ParamHeaderDeclaration[]>,
  ) {}

  /** An empty catalog. */
  static empty(): AggregatedCatalog {
    return AggregatedCatalog.build([]);
  }

  /** Merges the lists of `backends`, which must be in config order. */
  static build(
    backends: ReadonlyArray<{ backend: BrokerBackend; lists: BackendLists }>,
    options: CatalogBuildOptions = {},
  ): AggregatedCatalog {
    const clashes: NameClash[] = [];
    const rejectedTools: RejectedTool[] = [];
    const withheldTools: WithheldTool[] = [];
    const toolParamHeaders = new Map<string, readonly ParamHeaderDeclaration[]>();
    const tools: Record<string, unknown>[] = [];
    const prompts: Record<string, unknown>[] = [];
    const resources: Record<string, unknown>[] = [];
    const resourceTemplates: Record<string, unknown>[] = [];
    const toolRoutes = new Map<string, Route>();
    const promptRoutes = new Map<string, Route>();
    const resourceRoutes = new Map<string, string>();
    const templateOwners = new Map<string, string>();
    const templateRoutes: TemplateRoute[] = [];
    const resourceBackends: string[] = [];

    const addNamed = (
      kind: 'tool' | 'prompt',
      backend: BrokerBackend,
      items: Record<string, unknown>[],
      routes: Map<string, Route>,
      out: Record<string, unknown>[],
    ) => {
      for (const item of items) {
        if (typeof item.name !== 'string') continue;
        let paramHeaders: readonly ParamHeaderDeclaration[] = [];
        if (kind === 'tool') {
          const scan = scanParamHeaders(item.inputSchema);
          if (!scan.valid) {
            rejectedTools.push({ backend: backend.name, tool: item.name, reason: scan.reason });
            continue;
          }
          if (options.admitTool && !options.admitTool(backend, item)) {
            withheldTools.push({ backend: backend.name, tool: item.name });
            continue;
          }
          paramHeaders = scan.declarations;
        }
        const name = prefixedName(backend, item.name);
        const owner = routes.get(name);
        if (owner) {
          clashes.push({ kind, name, owner: owner.backend, hidden: backend.name });
          continue;
        }
        routes.set(name, {
          backend: backend.name,
          originalName: item.name,
          ...(paramHeaders.length === 0 ? {} : { paramHeaders }),
          ...(kind === 'tool' && isAppOnlyTool(item) ? { appOnly: true as const } : {}),
        });
        if (paramHeaders.length > 0) {
          toolParamHeaders.set(toolKey(backend.name, item.name), paramHeaders);
        }
        out.push({ ...(kind === 'tool' ? toolWithBrokerUiUris(backend.name, item) : item), name });
      }
    };

    for (const { backend, lists } of backends) {
      addNamed('tool', backend, lists.tools, toolRoutes, tools);
      addNamed('prompt', backend, lists.prompts, promptRoutes, prompts);
      if (lists.resources.length > 0 || lists.resourceTemplates.length > 0) {
        resourceBackends.push(backend.name);
      }
      for (const resource of lists.resources) {
        if (typeof resource.uri !== 'string') continue;
        const uri = brokerUiUri(backend.name, resource.uri);
        const owner = resourceRoutes.get(uri);
        if (owner !== undefined) {
          clashes.push({ kind: 'resource', name: uri, owner, hidden: backend.name });
          continue;
        }
        resourceRoutes.set(uri, backend.name);
        resources.push(uri === resource.uri ? resource : { ...resource, uri });
      }
      for (const template of lists.resourceTemplates) {
        if (typeof template.uriTemplate !== 'string') continue;
        const uriTemplate = brokerUiUri(backend.name, template.uriTemplate);
        const owner = templateOwners.get(uriTemplate);
        if (owner !== undefined) {
          clashes.push({
            kind: 'resourceTemplate',
            name: uriTemplate,
            owner,
            hidden: backend.name,
          });
          continue;
        }
        templateOwners.set(uriTemplate, backend.name);
        templateRoutes.push({
          backend: backend.name,
          uriTemplate,
          originalTemplate: template.uriTemplate,
          pattern: uriTemplateMatcher(uriTemplate),
        });
        resourceTemplates.push(
          uriTemplate === template.uriTemplate ? template : { ...template, uriTemplate },
        );
      }
    }
    return new AggregatedCatalog(
      tools,
      prompts,
      resources,
      resourceTemplates,
      toolRoutes,
      promptRoutes,
      resourceRoutes,
      templateRoutes,
      resourceBackends,
      new Set(backends.map(({ backend }) => backend.name)),
      clashes,
      rejectedTools,
      withheldTools,
      toolParamHeaders,
    );
  }

  /** True when a backend's tool renders an MCP App (names a UI resource). */
  get hasAppTools(): boolean {
    return this.tools.some(tool => toolUiResourceUri(tool) !== undefined);
  }

  /** True when a tool of one of `servers` renders an MCP App (a curated endpoint's view). */
  hasAppToolsOf(servers: ReadonlySet<string>): boolean {
    return this.tools.some(tool => {
      const backend = this.toolRoutes.get(tool.name as string)?.backend;
      return backend !== undefined && servers.has(backend) && toolUiResourceUri(tool) !== undefined;
    });
  }

  /** The backend and original name of a prefixed tool name. */
  routeTool(name: string): Route | undefined {
    return this.toolRoutes.get(name);
  }

  /**
   * The tools an MCP App may call by its server's own name `name` (contract §3.6): tools of
   * app servers (servers with at least one tool that names a UI resource) whose visibility
   * includes `"app"`, in config order, each with its broker name.
   */
  appToolsNamed(name: string): readonly AppToolRoute[] {
    this.#appTools ??= this.#indexAppTools();
    return this.#appTools.get(name) ?? [];
  }

  /**
   * The configured server a broker UI URI (`ui://<server>/…`) names; undefined for any other
   * value (an app's origin hint, contract §3.6).
   */
  uiUriServer(uri: unknown): string | undefined {
    return typeof uri === 'string'
      ? qualifiedUiUri(uri, server => this.serverNames.has(server))?.server
      : undefined;
  }

  #appTools: ReadonlyMap<string, readonly AppToolRoute[]> | undefined;

  #indexAppTools(): ReadonlyMap<string, readonly AppToolRoute[]> {
    const appServers = new Set<string>();
    for (const tool of this.tools) {
      if (toolUiResourceUri(tool) === undefined) continue;
      const server = this.toolRoutes.get(String(tool.name))?.backend;
      if (server !== undefined) appServers.add(server);
    }
    const index = new Map<string, AppToolRoute[]>();
    for (const tool of this.tools) {
      const brokerName = String(tool.name);
      const route = this.toolRoutes.get(brokerName);
      if (route === undefined || !appServers.has(route.backend) || !isAppCallableTool(tool)) {
        continue;
      }
      const named = index.get(route.originalName) ?? [];
      named.push({ ...route, brokerName });
      index.set(route.originalName, named);
    }
    return index;
  }

  /**
   * The `x-mcp-header` declarations of a backend's tool (its own name), empty when it has none
   * or is not in the catalog.
   */
  paramHeadersOf(backend: string, tool: string): readonly ParamHeaderDeclaration[] {
    return this.toolParamHeaders.get(toolKey(backend, tool)) ?? [];
  }

  /** The backend and original name of a prefixed prompt name. */
  routePrompt(name: string): Route | undefined {
    return this.promptRoutes.get(name);
  }

  /**
   * The backend that serves a resource URI: the server a broker UI URI names, else the listed
   * owner, else the first (config order) backend with a matching template, else the only
   * backend with resources at all. A UI URI that names no server is not routed.
   */
  routeResource(uri: string): string | undefined {
    return this.resolveResource(uri)?.backend;
  }

  /** Like {@link AggregatedCatalog.routeResource}, with the listed URI or template that matched. */
  resolveResource(uri: string): ResourceRoute | undefined {
    const qualified = qualifiedUiUri(uri, name => this.serverNames.has(name));
    if (qualified !== undefined) {
      // Servers may leave UI resources out of their lists: the URI itself names the server.
      const template = this.resourceRoutes.has(uri)
        ? undefined
        : this.templateRoutes.find(t => t.backend === qualified.server && t.pattern.test(uri));
      return {
        backend: qualified.server,
        name: template?.originalTemplate ?? qualified.uri,
        uri: qualified.uri,
      };
    }
    if (isUiUri(uri)) return undefined;
    const owner = this.resourceRoutes.get(uri);
    if (owner !== undefined) return { backend: owner, name: uri, uri };
    const template = this.templateRoutes.find(t => t.pattern.test(uri));
    if (template) return { backend: template.backend, name: template.originalTemplate, uri };
    if (this.resourceBackends.length !== 1) return undefined;
    return { backend: this.resourceBackends[0], name: uri, uri };
  }

  /**
   * The broker UI URIs an MCP App may mean by its server's own UI URI `uri` (contract §3.6):
   * for each server, in config order, that lists `uri` or has a template matching it, `uri` in
   * that server's broker form. Empty for a URI that is not an unqualified UI URI.
   */
  appResourceUris(uri: string): readonly string[] {
    const isServer = (name: string) => this.serverNames.has(name);
    if (!isUiUri(uri) || qualifiedUiUri(uri, isServer) !== undefined) return [];
    return [...this.serverNames]
      .map(server => ({ server, brokerUri: brokerUiUri(server, uri) }))
      .filter(
        ({ server, brokerUri }) =>
          this.resourceRoutes.get(brokerUri) === server ||
          this.templateRoutes.some(t => t.backend === server && t.pattern.test(brokerUri)),
      )
      .map(({ brokerUri }) => brokerUri);
  }

  /** The backend that owns a listed resource template, if any. */
  templateOwner(uriTemplate: string): string | undefined {
    return this.templateRoute(uriTemplate)?.backend;
  }

  /**
   * The backend that owns a listed resource template (as clients see it) and the template as
   * the backend lists it, which identifies it there for permissions.
   */
  templateRoute(uriTemplate: string): { backend: string; name: string } | undefined {
    const route = this.templateRoutes.find(t => t.uriTemplate === uriTemplate);
    return route && { backend: route.backend, name: route.originalTemplate };
  }

  /** A comparable fingerprint of what clients see for one kind. */
  fingerprint(kind: ViewKind): string {
    if (kind === 'tools') return JSON.stringify(this.tools);
    if (kind === 'prompts') return JSON.stringify(this.prompts);
    return JSON.stringify([this.resources, this.resourceTemplates]);
  }
}
