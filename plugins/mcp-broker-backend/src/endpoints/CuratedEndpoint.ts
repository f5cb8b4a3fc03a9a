/*
 * One curated endpoint (spec §13, docs/contracts/curated-endpoints.md): a named, narrower view of
 * the broker served at `/api/mcp-broker/endpoints/<name>/mcp`. What a person sees through it is
 * their permitted view ∩ the endpoint's selection — {@link CuratedEndpoint.narrowAccess} narrows
 * the access the admission chain decided, so an endpoint never shows or routes anything the
 * policy denies, and a tool outside it answers exactly as one that exists nowhere.
 *
 * The selection: the endpoint's servers; of their tools those whose prefixed name matches an
 * `include` glob (all, without `include`), is one of `includeNames` when given (exact names,
 * from Kubernetes) and matches no `exclude` glob, whose annotations (declared, or
 * MCP's defaults) equal the configured hints; prompts, resources and templates of the servers as
 * the person's view has them. Overrides change the title and description clients see, never what
 * is pinned or routed.
 *
 * Narrowed views are remembered per permitted view (weakly: the access control keeps one per
 * credential and catalog version), so a request pays the filtering once per catalog change.
 */
import type { AggregatedCatalog, Route } from '../broker/AggregatedCatalog';
import type { ListChange } from '../broker/ListViews';
import { recordField } from '../broker/itemFields';
import type { PrincipalAccess } from '../permissions/BrokerAccessControl';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { type CatalogSelection, PermittedCatalog } from '../permissions/PermittedCatalog';
import { globMatcher, toolAnnotation, type ToolAnnotation } from '../permissions/rules';
import { BROKER_IMPLEMENTATION } from '../protocol/versions';
import type { CuratedEndpointConfig } from './endpointConfig';

/** What `/status` shows of an endpoint (contract §6). */
export interface CuratedEndpointStatus {
  name: string;
  servers: string[];
  /** Configured servers the broker does not have (yet). */
  missingServers: string[];
  /** Overrides naming a tool the endpoint does not show. */
  unusedOverrides: string[];
  /** Tools the endpoint shows before permissions. */
  tools: number;
  /** Its client sessions on this replica. */
  sessions: number;
}

/** An ALLOW of everything: the endpoint's own selection, before any person's permissions. */
const EVERYTHING = {
  tool: { result: AuthorizeResult.ALLOW },
  prompt: { result: AuthorizeResult.ALLOW },
  resource: { result: AuthorizeResult.ALLOW },
} as const;

/** One curated endpoint; see the file comment. */
export class CuratedEndpoint implements CatalogSelection {
  readonly name: string;
  readonly servers: ReadonlySet<string>;
  /** `serverInfo` through the endpoint (`initialize`, `server/discover`). */
  readonly serverInfo: Readonly<{ name: string; title: string; version: string }>;
  readonly instructions?: string;
  readonly #config: CuratedEndpointConfig;
  readonly #included: (name: string) => boolean;
  readonly #excluded: (name: string) => boolean;
  readonly #views = new WeakMap<PrincipalAccess, PrincipalAccess>();
  readonly #selections = new WeakMap<AggregatedCatalog, PermittedCatalog>();

  constructor(config: CuratedEndpointConfig) {
    this.#config = config;
    this.name = config.name;
    this.servers = new Set(config.servers);
    this.serverInfo = Object.freeze({
      name: `${BROKER_IMPLEMENTATION.name}/${config.name}`,
      title: config.title ?? config.name,
      version: BROKER_IMPLEMENTATION.version,
    });
    if (config.instructions !== undefined) this.instructions = config.instructions;
    // `?` is one character here: tool names never hold one (see globMatcher).
    const glob = (patterns: readonly string[]) => globMatcher(patterns, { anyOneCharacter: true });
    const globbed = config.include === undefined ? () => true : glob(config.include);
    const names = config.includeNames === undefined ? undefined : new Set(config.includeNames);
    this.#included =
      names === undefined ? globbed : (name: string) => names.has(name) && globbed(name);
    this.#excluded = glob(config.exclude);
  }

  /** The configuration it was made from (compared on reload). */
  get config(): CuratedEndpointConfig {
    return this.#config;
  }

  /** {@link CatalogSelection}: the globs and annotation hints. */
  admitsTool(route: Route, tool: Record<string, unknown>): boolean {
    const name = tool.name as string;
    if (!this.#included(name) || this.#excluded(name)) return false;
    const resource = {
      server: route.backend,
      name: route.originalName,
      annotations: recordField(tool.annotations),
    };
    return Object.entries(this.#config.annotations).every(
      ([hint, wanted]) => toolAnnotation(resource, hint as ToolAnnotation) === wanted,
    );
  }

  /** {@link CatalogSelection}: the tool with this endpoint's overrides, if any. */
  presentTool(tool: Record<string, unknown>): Record<string, unknown> {
    const override = this.#config.overrides.get(tool.name as string);
    return override === undefined ? tool : { ...tool, ...override };
  }

  /** `access` narrowed to this endpoint (the same object for the same access). */
  narrowAccess(access: PrincipalAccess): PrincipalAccess {
    let narrowed = this.#views.get(access);
    if (narrowed === undefined) {
      narrowed = { ...access, catalog: access.catalog.narrowed(this) };
      this.#views.set(access, narrowed);
    }
    return narrowed;
  }

  /** What the endpoint shows of `catalog` before any person's permissions. */
  selectionOf(catalog: AggregatedCatalog): PermittedCatalog {
    let selection = this.#selections.get(catalog);
    if (selection === undefined) {
      selection = PermittedCatalog.of(catalog, EVERYTHING).narrowed(this);
      this.#selections.set(catalog, selection);
    }
    return selection;
  }

  /**
   * False only when `change` cannot alter what the endpoint shows anyone: a visible change that
   * leaves its selection of that kind as it was, or an announcement by servers it does not show.
   */
  mayHaveChanged(change: ListChange): boolean {
    if (!change.visible) {
      return [...change.announcedBy].some(server => this.servers.has(server));
    }
    return (
      this.selectionOf(change.previous).fingerprint(change.kind) !==
      this.selectionOf(change.next).fingerprint(change.kind)
    );
  }

  /** Its `/status` entry, given the broker's servers, catalog and this endpoint's sessions. */
  status(
    knownServers: ReadonlySet<string>,
    catalog: AggregatedCatalog,
    sessions: number,
  ): CuratedEndpointStatus {
    const tools = this.selectionOf(catalog).tools;
    const shown = new Set(tools.map(tool => tool.name as string));
    return {
      name: this.name,
      servers: [...this.servers],
      missingServers: [...this.servers].filter(server => !knownServers.has(server)),
      unusedOverrides: [...this.#config.overrides.keys()].filter(tool => !shown.has(tool)),
      tools: tools.length,
      sessions,
    };
  }
}
