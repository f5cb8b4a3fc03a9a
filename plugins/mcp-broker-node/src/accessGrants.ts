/*
 * Access grants (docs/contracts/mcp-access.md §5.1): what a person was granted on one broker
 * target — data, not a decision. A source (the portal, through its module) writes them into the
 * broker's feed; the broker's permission rule `HAS_ACCESS_GRANT` and its plan budgets read them.
 */
import { createExtensionPoint } from '@backstage/backend-plugin-api';

/**
 * A quota of a grant: at most `calls` per fixed window of `windowMs`, for the tools matching
 * `tools` (glob patterns of the tools' own names; absent: every tool of the target).
 *
 * @public
 */
export interface McpAccessGrantLimit {
  readonly calls: number;
  readonly windowMs: number;
  readonly tools?: readonly string[];
}

/**
 * What a person was granted on one broker target; data, not a decision.
 *
 * @public
 */
export interface McpAccessGrant {
  /** Unique for ever: once removed, an id is never accepted again. */
  readonly id: string;
  /** Grants replaced or removed together (one product). */
  readonly group: string;
  /** A user entity ref, e.g. `user:default/alice` (compared without case). */
  readonly subject: string;
  /** The broker server, or curated endpoint, the grant is for. */
  readonly target: { readonly kind: 'server' | 'endpoint'; readonly name: string };
  /** What a person calls it, for pages and refusals ("Example tools"). */
  readonly title: string;
  /** The plan's name ("bronze"). */
  readonly plan: string;
  /** Quotas (each a budget of the person on the target). */
  readonly limits: ReadonlyArray<McpAccessGrantLimit>;
  /** Epoch ms. */
  readonly approvedAt: number;
  /** Epoch ms; absent: never expires. */
  readonly expiresAt?: number;
  /** Where a person manages it (frontend paths), for pages. */
  readonly links?: { readonly manage?: string };
}

/**
 * What the broker gives a source to write its changes with. Every method is atomic and durable
 * when it resolves.
 *
 * @public
 */
export interface McpAccessGrantWriter {
  /** Adds or changes grants (a removed id stays removed: the upsert of a removed grant is ignored). */
  upsert(grants: readonly McpAccessGrant[]): Promise<void>;
  /** Removes grants for ever. */
  remove(ids: readonly string[]): Promise<void>;
  /** Makes `grants` the whole of `group` (removing the group's others). */
  replaceGroup(group: string, grants: readonly McpAccessGrant[]): Promise<void>;
  /** Removes every grant of `group`. */
  removeGroup(group: string): Promise<void>;
}

/**
 * A place grants come from (the portal, through its module).
 *
 * @public
 */
export interface McpAccessGrantSource {
  /** `[a-z0-9-]+`; prefixes its grants' ids and groups in the broker (`portal:`). */
  readonly id: string;
  /** Every live grant, page by page: the full sync. */
  listAll(options: { signal: AbortSignal }): AsyncIterable<readonly McpAccessGrant[]>;
  /** Called once, when the broker starts: the source subscribes to its changes and writes them. */
  start(writer: McpAccessGrantWriter): Promise<void>;
}

/**
 * The broker's extension point for grant sources.
 *
 * @public
 */
export interface McpAccessGrantsExtensionPoint {
  /** Adds a source; two sources with one id fail start-up. */
  addGrantSource(source: McpAccessGrantSource): void;
}

/**
 * The broker's extension point for grant sources (plugin `mcp-broker`).
 *
 * @public
 */
export const mcpAccessGrantsExtensionPoint = createExtensionPoint<McpAccessGrantsExtensionPoint>({
  id: 'mcp-broker.access-grants',
});
