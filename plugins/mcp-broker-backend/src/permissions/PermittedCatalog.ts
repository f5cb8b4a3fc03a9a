/*
 * What one principal may see and use of the aggregated catalog: the catalog's lists without
 * the items its decisions deny, and routes that answer `undefined` for a denied item exactly as
 * for a name that exists nowhere (spec §8: a denied item is indistinguishable from an unknown
 * one, and nothing denied reaches a backend).
 *
 * Built once per (principal, catalog version) from three decisions (tool, prompt, resource):
 * ALLOW keeps the catalog's own arrays (no copy), DENY empties them, CONDITIONAL applies the
 * conditions to each item in process with the plugin's rules. A `resources/read` of a URI
 * that is not listed is decided when asked, with the same conditions (no round trip).
 */
import { AuthorizeResult, PolicyDecision } from '@backstage/plugin-permission-common';
import { createConditionAuthorizer } from '@backstage/plugin-permission-node';
import type {
  AggregatedCatalog,
  AppToolRoute,
  ResourceRoute,
  Route,
  ViewKind,
} from '../broker/AggregatedCatalog';
import { toolUiResourceUri, toolWithoutUiLink } from '../protocol/uiResourceUris';
import { BrokerItemResource, BrokerRules, BrokerToolResource, createBrokerRules } from './rules';

/** The three resource decisions of one principal. */
export interface CatalogDecisions {
  tool: PolicyDecision;
  prompt: PolicyDecision;
  resource: PolicyDecision;
}

/** The three resource types' condition authorizers, over one set of rules. */
export interface ConditionAuthorizers {
  tool: (decision: PolicyDecision, tool: BrokerToolResource) => boolean;
  prompt: (decision: PolicyDecision, prompt: BrokerItemResource) => boolean;
  resource: (decision: PolicyDecision, resource: BrokerItemResource) => boolean;
}

/** The authorizers of `rules` (build once: each call compiles the rules anew). */
export function conditionAuthorizersOf(rules: BrokerRules): ConditionAuthorizers {
  return {
    tool: createConditionAuthorizer(rules.tool),
    prompt: createConditionAuthorizer(rules.prompt),
    resource: createConditionAuthorizer(rules.resource),
  };
}

/**
 * A narrower view of the catalog (a curated endpoint, spec §13): the servers whose items it may
 * show, which of their tools, and how a shown tool is presented. It only narrows: a narrowed
 * view holds a subset of the view it was made from.
 */
export interface CatalogSelection {
  /** The servers whose tools, prompts, resources and resource templates may be shown. */
  readonly servers: ReadonlySet<string>;
  /** Whether a tool of one of `servers` is shown (its route and the tool as listed). */
  admitsTool(route: Route, tool: Record<string, unknown>): boolean;
  /** What clients see of a shown tool (e.g. another title or description). */
  presentTool(tool: Record<string, unknown>): Record<string, unknown>;
}

/** Without grants (HAS_ACCESS_GRANT false for everyone). */
const WITHOUT_GRANTS = conditionAuthorizersOf(createBrokerRules());

function isAllowed<T>(
  decision: PolicyDecision,
  authorizer: (d: PolicyDecision, r: T) => boolean,
  item: T,
): boolean {
  if (decision.result === AuthorizeResult.ALLOW) return true;
  if (decision.result === AuthorizeResult.DENY) return false;
  return authorizer(decision, item);
}

/** The aggregated catalog as one principal may see and use it. */
export class PermittedCatalog {
  private constructor(
    private readonly catalog: AggregatedCatalog,
    private readonly decisions: CatalogDecisions,
    private readonly authorizers: ConditionAuthorizers,
    readonly tools: readonly Record<string, unknown>[],
    readonly prompts: readonly Record<string, unknown>[],
    readonly resources: readonly Record<string, unknown>[],
    readonly resourceTemplates: readonly Record<string, unknown>[],
    private readonly toolNames: ReadonlySet<string> | 'all',
    private readonly promptNames: ReadonlySet<string> | 'all',
    /** The servers a narrowed view is limited to (see {@link PermittedCatalog.narrowed}). */
    private readonly servers?: ReadonlySet<string>,
    /** The selections this view was narrowed by, in order. */
    private readonly selections: readonly CatalogSelection[] = [],
  ) {}

  /** Applies `decisions` to every item of `catalog`, conditions through `authorizers`. */
  static of(
    catalog: AggregatedCatalog,
    decisions: CatalogDecisions,
    authorizers: ConditionAuthorizers = WITHOUT_GRANTS,
  ): PermittedCatalog {
    const { tool: allowedTool, prompt: allowedPrompt, resource: allowedResource } = authorizers;
    const tools = filterNamed(
      catalog.tools,
      decisions.tool,
      name => catalog.routeTool(name),
      (route, item) =>
        allowedTool(decisions.tool, {
          server: route.backend,
          name: route.originalName,
          annotations: isRecord(item.annotations) ? item.annotations : undefined,
        } satisfies BrokerToolResource),
    );
    const prompts = filterNamed(
      catalog.prompts,
      decisions.prompt,
      name => catalog.routePrompt(name),
      route => allowedPrompt(decisions.prompt, { server: route.backend, name: route.originalName }),
    );
    // Decided on the backend's own URI or template (a UI URI's original, not the broker's form).
    const resourceAllowed = (route: { backend: string; name: string } | undefined) =>
      route !== undefined &&
      isAllowed(decisions.resource, allowedResource, {
        server: route.backend,
        name: route.name,
      } satisfies BrokerItemResource);
    const resources =
      decisions.resource.result === AuthorizeResult.CONDITIONAL
        ? catalog.resources.filter(r => resourceAllowed(catalog.resolveResource(String(r.uri))))
        : kept(catalog.resources, decisions.resource);
    const resourceTemplates =
      decisions.resource.result === AuthorizeResult.CONDITIONAL
        ? catalog.resourceTemplates.filter(t =>
            resourceAllowed(catalog.templateRoute(String(t.uriTemplate))),
          )
        : kept(catalog.resourceTemplates, decisions.resource);
    // A tool whose UI the person may not read is listed without its UI linkage (contract §3.7).
    const linkedTools =
      decisions.resource.result === AuthorizeResult.ALLOW
        ? tools.items
        : withoutDeniedUiLinks(tools.items, uri => resourceAllowed(catalog.resolveResource(uri)));
    return new PermittedCatalog(
      catalog,
      decisions,
      authorizers,
      linkedTools,
      prompts.items,
      resources,
      resourceTemplates,
      tools.names,
      prompts.names,
    );
  }

  /**
   * The tools a client sees: all for a client that declared `io.modelcontextprotocol/ui` (its
   * host decides what the model sees), else without the app-only ones (contract §3.5).
   */
  visibleTools(declaresUi: boolean): readonly Record<string, unknown>[] {
    if (declaresUi) return this.tools;
    this.modelTools ??= this.tools.some(tool => this.isAppOnly(tool))
      ? this.tools.filter(tool => !this.isAppOnly(tool))
      : this.tools;
    return this.modelTools;
  }

  private modelTools: readonly Record<string, unknown>[] | undefined;

  private isAppOnly(tool: Record<string, unknown>): boolean {
    return typeof tool.name === 'string' && this.catalog.routeTool(tool.name)?.appOnly === true;
  }

  /**
   * This view narrowed by `selection`: only what it already holds, of the selected servers, that
   * the selection admits (tools presented as it says); routes outside it answer `undefined`
   * exactly as for a name that exists nowhere.
   */
  narrowed(selection: CatalogSelection): PermittedCatalog {
    const { servers } = selection;
    const inServers = (backend: string | undefined) =>
      backend !== undefined && servers.has(backend);
    const tools: Record<string, unknown>[] = [];
    for (const tool of this.tools) {
      const route = typeof tool.name === 'string' ? this.routeTool(tool.name) : undefined;
      if (route !== undefined && servers.has(route.backend) && selection.admitsTool(route, tool)) {
        tools.push(selection.presentTool(tool));
      }
    }
    const prompts = this.prompts.filter(p =>
      inServers(typeof p.name === 'string' ? this.routePrompt(p.name)?.backend : undefined),
    );
    return new PermittedCatalog(
      this.catalog,
      this.decisions,
      this.authorizers,
      tools,
      prompts,
      this.resources.filter(r => inServers(this.catalog.routeResource(String(r.uri)))),
      this.resourceTemplates.filter(t =>
        inServers(this.catalog.templateOwner(String(t.uriTemplate))),
      ),
      new Set(tools.map(tool => tool.name as string)),
      new Set(prompts.map(prompt => prompt.name as string)),
      this.servers === undefined
        ? servers
        : new Set([...servers].filter(server => this.servers!.has(server))),
      [...this.selections, selection],
    );
  }

  /**
   * Whether the principal may use a tool its server no longer lists — a task's tool, decided on
   * the entry the task's row keeps (docs/contracts/tasks-and-apps.md §2.8): `tool` (the server's
   * own name and the annotations it had) under the broker name `brokerName`, with the same
   * decision and conditions as a listed tool, and in a narrowed view only if its servers and
   * selections would show such a tool.
   */
  mayUseUnlistedTool(brokerName: string, tool: BrokerToolResource): boolean {
    if (this.#inServers(tool.server) === undefined) return false;
    const route: Route = { backend: tool.server, originalName: tool.name };
    const listed = { name: brokerName, ...(tool.annotations && { annotations: tool.annotations }) };
    return (
      this.selections.every(selection => selection.admitsTool(route, listed)) &&
      isAllowed(this.decisions.tool, this.authorizers.tool, tool)
    );
  }

  /** A comparable fingerprint of this view of one kind (as AggregatedCatalog's). */
  fingerprint(kind: ViewKind): string {
    if (kind === 'tools') return JSON.stringify(this.tools);
    if (kind === 'prompts') return JSON.stringify(this.prompts);
    return JSON.stringify([this.resources, this.resourceTemplates]);
  }

  /** True when this view of `kind` holds an item served by one of `servers`. */
  holdsItemOf(kind: ViewKind, servers: ReadonlySet<string>): boolean {
    const served = (backend: string | undefined) => backend !== undefined && servers.has(backend);
    if (kind === 'tools') {
      return this.tools.some(t => served(this.catalog.routeTool(String(t.name))?.backend));
    }
    if (kind === 'prompts') {
      return this.prompts.some(p => served(this.catalog.routePrompt(String(p.name))?.backend));
    }
    return (
      this.resources.some(r => served(this.catalog.routeResource(String(r.uri)))) ||
      this.resourceTemplates.some(t => served(this.catalog.templateOwner(String(t.uriTemplate))))
    );
  }

  /** The route of a permitted tool (prefixed name); undefined when unknown or denied. */
  routeTool(name: string): Route | undefined {
    return this.toolNames === 'all' || this.toolNames.has(name)
      ? this.catalog.routeTool(name)
      : undefined;
  }

  /**
   * The tools named `name` (a server's own name) that an MCP App may call and the principal may
   * use, in config order (contract §3.6).
   */
  appToolsNamed(name: string): readonly AppToolRoute[] {
    return this.catalog
      .appToolsNamed(name)
      .filter(tool => this.routeTool(tool.brokerName) !== undefined);
  }

  /**
   * The broker UI URIs an MCP App may mean by its server's own UI URI `uri` that the principal
   * may read, in config order (contract §3.6).
   */
  appResourceUris(uri: string): readonly string[] {
    return this.catalog
      .appResourceUris(uri)
      .filter(brokerUri => this.resolveResource(brokerUri) !== undefined);
  }

  /** The configured server a broker UI URI names (an app's origin hint); undefined otherwise. */
  uiUriServer(uri: unknown): string | undefined {
    return this.catalog.uiUriServer(uri);
  }

  /** The route of a permitted prompt (prefixed name); undefined when unknown or denied. */
  routePrompt(name: string): Route | undefined {
    return this.promptNames === 'all' || this.promptNames.has(name)
      ? this.catalog.routePrompt(name)
      : undefined;
  }

  /** The backend that owns a listed resource template (the principal's list holds only permitted ones). */
  templateServer(uriTemplate: string): string | undefined {
    return this.#inServers(this.catalog.templateOwner(uriTemplate));
  }

  /**
   * The backend serving a resource URI the principal may read; undefined when no backend serves
   * it or it is denied (decided on the listed URI, else on the template that covers it).
   */
  routeResource(uri: string): string | undefined {
    return this.resolveResource(uri)?.backend;
  }

  /**
   * Like {@link PermittedCatalog.routeResource}, with the URI the backend knows the resource by
   * (a broker UI URI's original).
   */
  resolveResource(uri: string): ResourceRoute | undefined {
    const route = this.catalog.resolveResource(uri);
    if (route === undefined) return undefined;
    const item = { server: route.backend, name: route.name } satisfies BrokerItemResource;
    return isAllowed(this.decisions.resource, this.authorizers.resource, item) &&
      this.#inServers(route.backend) !== undefined
      ? route
      : undefined;
  }

  /** `backend` unless this is a narrowed view without it. */
  #inServers(backend: string | undefined): string | undefined {
    return backend === undefined || this.servers === undefined || this.servers.has(backend)
      ? backend
      : undefined;
  }
}

/** `tools` with the UI linkage removed where `readable` denies the linked UI resource. */
function withoutDeniedUiLinks(
  tools: readonly Record<string, unknown>[],
  readable: (uri: string) => boolean,
): readonly Record<string, unknown>[] {
  const linked = tools.map(tool => {
    const uri = toolUiResourceUri(tool);
    return uri === undefined || readable(uri) ? tool : toolWithoutUiLink(tool);
  });
  return linked.some((tool, index) => tool !== tools[index]) ? linked : tools;
}

function kept<T>(items: readonly T[], decision: PolicyDecision): readonly T[] {
  return decision.result === AuthorizeResult.ALLOW ? items : [];
}

/** Filters prefixed-name items (tools, prompts) and collects the permitted names. */
function filterNamed(
  items: readonly Record<string, unknown>[],
  decision: PolicyDecision,
  routeOf: (name: string) => Route | undefined,
  allowed: (route: Route, item: Record<string, unknown>) => boolean,
): { items: readonly Record<string, unknown>[]; names: ReadonlySet<string> | 'all' } {
  if (decision.result === AuthorizeResult.ALLOW) return { items, names: 'all' };
  if (decision.result === AuthorizeResult.DENY) return { items: [], names: new Set() };
  const permitted = items.filter(item => {
    const route = typeof item.name === 'string' ? routeOf(item.name) : undefined;
    return route !== undefined && allowed(route, item);
  });
  return { items: permitted, names: new Set(permitted.map(item => item.name as string)) };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
