/*
 * Who may do what in the broker (spec §8), decided with Backstage permissions and remembered
 * per (credential, catalog version) for at most `maxAgeMs` (PrincipalDecisionCache). A
 * credential is the principal and its token (router/principalAccess.ts): two static tokens of
 * one subject with different `accessRestrictions` are decided apart.
 *
 * One decision is ONE `authorizeConditional` call holding all five permissions: the two basic
 * ones (session.create, status.read) answer ALLOW or DENY, the three resource ones may answer
 * CONDITIONAL, and their conditions are applied here to every catalog item (PermittedCatalog).
 * So a credential costs one permission round trip per catalog change or `maxAgeMs`, never one
 * per call. Service principals (static tokens) are decided locally by Backstage's permissions
 * service from their `accessRestrictions` (no round trip at all).
 *
 * Conditions may name HAS_ACCESS_GRANT (docs/contracts/mcp-access.md §6): what it answers
 * changes with the grants, not with the policy, so the decisions are remembered as asked and the
 * permitted catalog is derived from them again — without a round trip — when the grants' version
 * changed since (a grant approved, revoked or expired is honoured at the next request).
 *
 * Failure: when the permission backend cannot be asked, `forCredential` rejects (fail closed)
 * and nothing is remembered; the caller answers 503 and the next request asks again.
 *
 * It also tells the broker whose view a list change can have altered (ListViews), from each
 * credential's last decision, whatever its age: list_changed reports catalog changes, never
 * policy changes (a client learns of those when it lists again, within the decision age), so
 * the question is what the change does to the view the client was last given. A credential
 * without a remembered decision (none yet, or pushed out by `maxEntries` others) hears every
 * change.
 */
import type { BackstageCredentials, PermissionsService } from '@backstage/backend-plugin-api';
import {
  AuthorizeResult,
  PolicyDecision,
  QueryPermissionRequest,
} from '@backstage/plugin-permission-common';
import {
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
  mcpBrokerSessionCreatePermission,
  mcpBrokerStatusReadPermission,
  mcpBrokerToolUsePermission,
} from '@devportal/plugin-mcp-broker-common';
import type { AggregatedCatalog, ViewKind } from '../broker/AggregatedCatalog';
import type { ListChange, ListViews } from '../broker/ListViews';
import { MAX_PERMISSION_DECISION_AGE_MS } from '../config';
import {
  CatalogDecisions,
  conditionAuthorizersOf,
  type ConditionAuthorizers,
  PermittedCatalog,
} from './PermittedCatalog';
import { createBrokerRules, type BrokerRules, type GrantLookup } from './rules';
import {
  DEFAULT_DECISION_CACHE_MAX_PRINCIPALS,
  PrincipalDecisionCache,
} from './PrincipalDecisionCache';

/** What one principal may do, for one catalog version. */
export interface PrincipalAccess {
  /** `mcp-broker.session.create`: may `initialize`. */
  readonly mayCreateSession: boolean;
  /** `mcp-broker.status.read`: may read GET /status. */
  readonly mayReadStatus: boolean;
  /** The catalog as this principal may see and use it. */
  readonly catalog: PermittedCatalog;
}

/** Options of {@link BrokerAccessControl.create}. */
export interface BrokerAccessControlOptions {
  permissions: PermissionsService;
  /** Default (and maximum) {@link MAX_PERMISSION_DECISION_AGE_MS}. */
  maxAgeMs?: number;
  /** Milliseconds clock (tests). */
  now?: () => number;
  /** The access grants HAS_ACCESS_GRANT reads, and their version (changes with any grant). */
  grants?: { lookup: GrantLookup; version(): unknown };
}

/** What one decision said, as remembered (the catalog is derived from it). */
interface Decided {
  mayCreateSession: boolean;
  mayReadStatus: boolean;
  decisions: CatalogDecisions;
}

/**
 * The five permissions in one query. The permissions service types `authorizeConditional` for
 * resource permissions only, but its wire protocol (`POST /api/permission/authorize` without
 * resource refs) and the policy answer basic permissions in the same batch with ALLOW or DENY,
 * which is what lets one round trip decide everything.
 */
const QUERY = [
  mcpBrokerSessionCreatePermission,
  mcpBrokerStatusReadPermission,
  mcpBrokerToolUsePermission,
  mcpBrokerPromptUsePermission,
  mcpBrokerResourceReadPermission,
].map(permission => ({ permission }) as unknown as QueryPermissionRequest);

/** Which decision governs each kind of list. */
const VIEW_DECISION: Record<ViewKind, keyof CatalogDecisions> = {
  tools: 'tool',
  prompts: 'prompt',
  resources: 'resource',
};

/** Decides, remembers and applies the broker's permissions per credential. */
export class BrokerAccessControl implements ListViews {
  readonly #permissions: PermissionsService;
  readonly #cache: PrincipalDecisionCache<Decided>;
  /** The access derived from a remembered decision, for one catalog and grants version. */
  readonly #derived = new WeakMap<
    Decided,
    { catalog: AggregatedCatalog; grantsVersion: unknown; access: PrincipalAccess }
  >();
  readonly #grants: BrokerAccessControlOptions['grants'];
  readonly #authorizers: ConditionAuthorizers;
  /** The rules this broker applies (registered with Backstage as well). */
  readonly rules: BrokerRules;
  /** Each credential's last catalog decisions; insertion order is age order (bounded). */
  readonly #lastDecisions = new Map<string, CatalogDecisions>();
  #authorizeCalls = 0;

  static create(options: BrokerAccessControlOptions): BrokerAccessControl {
    return new BrokerAccessControl(options);
  }

  private constructor(options: BrokerAccessControlOptions) {
    this.#permissions = options.permissions;
    this.#grants = options.grants;
    this.rules = createBrokerRules(options.grants?.lookup);
    this.#authorizers = conditionAuthorizersOf(this.rules);
    this.#cache = new PrincipalDecisionCache({
      maxAgeMs: Math.min(
        options.maxAgeMs ?? MAX_PERMISSION_DECISION_AGE_MS,
        MAX_PERMISSION_DECISION_AGE_MS,
      ),
      now: options.now,
    });
  }

  /** Calls made to the permissions service so far (the status endpoint and the benchmark show it). */
  get authorizeCalls(): number {
    return this.#authorizeCalls;
  }

  /**
   * What the holder of `credential` (a principal and a digest of its token) may do with
   * `catalog`. `credentials` is called only when a decision must be taken (it may verify the
   * request's token again).
   */
  async forCredential(
    credential: string,
    catalog: AggregatedCatalog,
    credentials: () => Promise<BackstageCredentials>,
  ): Promise<PrincipalAccess> {
    const decided = await this.#cache.get(credential, catalog, async () => {
      const caller = await credentials();
      this.#authorizeCalls += 1;
      const [session, status, tool, prompt, resource] =
        (await this.#permissions.authorizeConditional(QUERY, {
          credentials: caller,
        })) as PolicyDecision[];
      const decisions = { tool, prompt, resource };
      this.#remember(credential, decisions);
      return {
        mayCreateSession: session.result === AuthorizeResult.ALLOW,
        mayReadStatus: status.result === AuthorizeResult.ALLOW,
        decisions,
      };
    });
    const grantsVersion = this.#grants?.version();
    const known = this.#derived.get(decided);
    if (known !== undefined && known.catalog === catalog && known.grantsVersion === grantsVersion) {
      return known.access;
    }
    const access = {
      mayCreateSession: decided.mayCreateSession,
      mayReadStatus: decided.mayReadStatus,
      catalog: PermittedCatalog.of(catalog, decided.decisions, this.#authorizers),
    };
    this.#derived.set(decided, { catalog, grantsVersion, access });
    return access;
  }

  /** {@link ListViews}: see the file comment. */
  mayHaveChanged(viewer: string, change: ListChange): boolean {
    const decisions = this.#lastDecisions.get(viewer);
    if (decisions === undefined) return true;
    const before = PermittedCatalog.of(change.previous, decisions, this.#authorizers);
    const after = PermittedCatalog.of(change.next, decisions, this.#authorizers);
    if (change.visible) return before.fingerprint(change.kind) !== after.fingerprint(change.kind);
    // An announcement: whatever the server changed, an ALLOW would show it and a DENY hide it;
    // under conditions, it can concern the viewer if it may see something of that server.
    const decision = decisions[VIEW_DECISION[change.kind]];
    if (decision.result !== AuthorizeResult.CONDITIONAL) {
      return decision.result === AuthorizeResult.ALLOW;
    }
    return (
      before.holdsItemOf(change.kind, change.announcedBy) ||
      after.holdsItemOf(change.kind, change.announcedBy)
    );
  }

  /**
   * The viewers a change of access grants can concern: those whose last decisions have a
   * HAS_ACCESS_GRANT condition naming one of the changed `subjects` (any, for `'all'`), and
   * those without a remembered decision.
   */
  grantAudience(subjects: readonly string[] | 'all'): (viewer: string | undefined) => boolean {
    const changed = subjects === 'all' ? undefined : new Set(subjects);
    return viewer => {
      if (viewer === undefined) return true;
      const decisions = this.#lastDecisions.get(viewer);
      if (decisions === undefined) return true;
      const claims = Object.values(decisions).flatMap(grantClaimsOf);
      if (claims.length === 0) return false;
      return changed === undefined || claims.some(claim => changed.has(claim));
    };
  }

  #remember(credential: string, decisions: CatalogDecisions) {
    this.#lastDecisions.delete(credential);
    while (this.#lastDecisions.size >= DEFAULT_DECISION_CACHE_MAX_PRINCIPALS) {
      const oldest = this.#lastDecisions.keys().next();
      if (oldest.done) break;
      this.#lastDecisions.delete(oldest.value);
    }
    this.#lastDecisions.set(credential, decisions);
  }
}

/** The claims (lower case) of every HAS_ACCESS_GRANT condition of a conditional decision. */
function grantClaimsOf(decision: PolicyDecision): string[] {
  if (decision.result !== AuthorizeResult.CONDITIONAL) return [];
  const claims: string[] = [];
  const walk = (criteria: unknown): void => {
    if (typeof criteria !== 'object' || criteria === null) return;
    const node = criteria as Record<string, unknown>;
    for (const key of ['allOf', 'anyOf']) {
      if (Array.isArray(node[key])) (node[key] as unknown[]).forEach(walk);
    }
    if (node.not !== undefined) walk(node.not);
    const params = node.params as { claims?: unknown } | undefined;
    if (node.rule === 'HAS_ACCESS_GRANT' && Array.isArray(params?.claims)) {
      for (const claim of params!.claims as unknown[]) {
        if (typeof claim === 'string') claims.push(claim.toLocaleLowerCase('en-US'));
      }
    }
  };
  walk(decision.conditions);
  return claims;
}
