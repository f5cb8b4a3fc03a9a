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
 * Failure: when the permission backend cannot be asked, `forCredential` rejects (fail closed)
 * and nothing is remembered; the caller answers 503 and the next request asks again.
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
import type { AggregatedCatalog } from '../broker/AggregatedCatalog';
import { MAX_PERMISSION_DECISION_AGE_MS } from '../config';
import { PermittedCatalog } from './PermittedCatalog';
import { PrincipalDecisionCache } from './PrincipalDecisionCache';

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

/** Decides, remembers and applies the broker's permissions per principal. */
export class BrokerAccessControl {
  readonly #permissions: PermissionsService;
  readonly #cache: PrincipalDecisionCache<PrincipalAccess>;
  #authorizeCalls = 0;

  static create(options: BrokerAccessControlOptions): BrokerAccessControl {
    return new BrokerAccessControl(options);
  }

  private constructor(options: BrokerAccessControlOptions) {
    this.#permissions = options.permissions;
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
  forCredential(
    credential: string,
    catalog: AggregatedCatalog,
    credentials: () => Promise<BackstageCredentials>,
  ): Promise<PrincipalAccess> {
    return this.#cache.get(credential, catalog, async () => {
      const caller = await credentials();
      this.#authorizeCalls += 1;
      const [session, status, tool, prompt, resource] =
        (await this.#permissions.authorizeConditional(QUERY, {
          credentials: caller,
        })) as PolicyDecision[];
      return {
        mayCreateSession: session.result === AuthorizeResult.ALLOW,
        mayReadStatus: status.result === AuthorizeResult.ALLOW,
        catalog: PermittedCatalog.of(catalog, { tool, prompt, resource }),
      };
    });
  }
}
