/*
 * The rate-limit step of a person's request to a server (a tool call, or another method that
 * reaches a backend on their behalf, spec §12): whose request it is (principal, and their groups
 * when an entry names groups), which limits hold (RateLimitRules), whether each budget has a unit
 * left (RateLimiter), and, when one does not, the refusal the client gets. Which methods are
 * counted is the method table's `limited` column narrowed by `mcpBroker.rateLimits.methods`
 * (`counts`). Knows nothing of HTTP.
 *
 * Fail closed: when an entry names groups and the person's groups cannot be read, the request
 * is refused as retryable (`unavailable`), never counted under looser limits.
 *
 * Plans (docs/contracts/mcp-access.md §6.4): when the person holds live access grants on the
 * server, their plans' quotas hold too. The grants are tried oldest first; the request is admitted
 * under the first whose quotas, together with the configured limits, all have room, and counts
 * against those only. When none has room it is refused with the earliest retry; a configured
 * limit that has no room refuses it whatever the plans say. A request admitted under a grant is
 * answered with that grant's id, and a plan's refusal names the grant whose plan refused (the
 * earliest retry), for the audit trail (§6.4).
 */
import type {
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import type { StoredAccessGrant } from '../grants/AccessGrantStore';
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import {
  limitsUnavailableError,
  planLimitedError,
  rateLimitedError,
} from '../protocol/rateLimited';
import { GroupsUnavailableError, PrincipalGroups } from './PrincipalGroups';
import type { RateLimitConfig } from './rateLimitConfig';
import { describePlanLimit, isPlanLimit, planBudgetsOf, planLimitsOf } from './planLimits';
import { describeLimit, RateLimitRules, subjectOfPrincipal } from './RateLimitRules';
import { RateLimiter, type Admission, type QuotaStore } from './RateLimiter';

/** A request about to be forwarded. */
export interface LimitedRequest {
  /** `user:<entity ref>` or `service:<subject>`. */
  principal: string;
  /** The request's credentials, asked only when the person's groups must be read. */
  credentials: () => Promise<BackstageCredentials>;
  /** The configured server. */
  server: string;
  /** A tool call's backend-own tool name; undefined for the other methods. */
  tool?: string;
}

/** Why a request was refused, and what the client is told. */
export interface RateLimitRefusal {
  /** `limited`: a budget is spent; `unavailable`: the limits cannot be known yet (retryable). */
  readonly kind: 'limited' | 'unavailable';
  readonly retryAfterMs: number;
  /** The limit in words ("5 tool calls per minute on server …"); the reason when unavailable. */
  readonly limit: string;
  /** Where that limit is configured (`mcpBroker.rateLimits.overrides[1]`, or a plan). */
  readonly configuredAt: string;
  /** `plan` when the person's plan refused it (an access grant's quota), else `config`. */
  readonly limitSource: 'config' | 'plan';
  /** The JSON-RPC error (-32000, `data: { reason, retryAfterMs }`). */
  readonly error: JsonRpcErrorObject;
  /** The feed id (`<source>:<id>`) of the grant whose plan refused it (`limitSource: 'plan'`). */
  readonly grant?: string;
}

/** A request admitted under a person's access grant (its plan had room). */
export interface AdmittedUnderGrant {
  readonly kind: 'admitted';
  /** The grant's feed id (`<source>:<id>`), for the call's audit event; never its plan. */
  readonly grant: string;
}

/**
 * What {@link RequestRateLimits.admit} decides: undefined (admitted, no grant involved), admitted
 * under a grant, or refused.
 */
export type RateLimitDecision = RateLimitRefusal | AdmittedUnderGrant | undefined;

const NO_GROUPS: readonly string[] = [];

/** Options of {@link RequestRateLimits.create}. */
export interface RequestRateLimitsOptions {
  /** `mcpBroker.rateLimits`; absent: only plans limit. */
  config?: RateLimitConfig;
  /** A person's live access grants, whose plans limit them too (absent: no plan applies). */
  grants?: { grantsOf(subject: string): readonly StoredAccessGrant[] };
  /** The shared count (several replicas, `sessionStore: database`); absent: counted here. */
  store?: QuotaStore;
  userInfo: UserInfoService;
  logger: LoggerService;
  now?: () => number;
}

/** Admits or refuses requests by `mcpBroker.rateLimits`; see the file comment. */
export class RequestRateLimits {
  readonly #limiter: RateLimiter;
  readonly #groups: PrincipalGroups | undefined;
  readonly #methods: ReadonlySet<string> | undefined;
  readonly #toolCallsOnly: boolean;
  readonly #grants: RequestRateLimitsOptions['grants'];

  /** The step, or undefined when nothing can limit anyone (no configured limit, no grants). */
  static create(options: RequestRateLimitsOptions): RequestRateLimits | undefined {
    const rules = RateLimitRules.of(options.config ?? { rules: [] });
    if (rules.empty && options.grants === undefined) return undefined;
    return new RequestRateLimits(rules, options);
  }

  private constructor(rules: RateLimitRules, options: RequestRateLimitsOptions) {
    this.#limiter = RateLimiter.create({
      rules,
      store: options.store,
      logger: options.logger,
      now: options.now,
    });
    this.#groups = rules.needsGroups
      ? PrincipalGroups.create({
          userInfo: options.userInfo,
          logger: options.logger,
          now: options.now,
        })
      : undefined;
    this.#grants = options.grants;
    const methods = options.config?.methods;
    this.#methods = methods === undefined ? undefined : new Set(methods);
    this.#toolCallsOnly =
      methods !== undefined && methods.every(m => clientRequestMethod(m)?.item === 'tool');
  }

  /**
   * True when `method` is counted: `mcpBroker.rateLimits.methods` names it, or (not configured)
   * the method table marks it `limited` — which the caller has checked.
   */
  counts(method: string): boolean {
    return this.#methods === undefined || this.#methods.has(method);
  }

  /**
   * Counts the request, or gives its refusal (nothing counted then): at once in the usual case,
   * else (a person's groups to read, a lease to take) as a promise.
   */
  admit(request: LimitedRequest): RateLimitDecision | Promise<RateLimitDecision> {
    if (this.#groups === undefined) return this.#decide(request, NO_GROUPS);
    return this.#groups.groupsOf(request.principal, request.credentials).then(
      groups => this.#decide(request, groups),
      (error: unknown) => {
        if (!(error instanceof GroupsUnavailableError)) throw error;
        const refusal: RateLimitRefusal = {
          kind: 'unavailable',
          retryAfterMs: error.retryAfterMs,
          limit: 'the limits of your groups (your groups could not be read)',
          configuredAt: 'mcpBroker.rateLimits',
          limitSource: 'config',
          error: limitsUnavailableError(error.retryAfterMs),
        };
        return refusal;
      },
    );
  }

  #decide(
    request: LimitedRequest,
    groups: readonly string[],
  ): RateLimitDecision | Promise<RateLimitDecision> {
    const person = { principal: request.principal, groups };
    const call = {
      server: request.server,
      ...(request.tool === undefined ? {} : { tool: request.tool }),
    };
    const covering = this.#coveringGrants(request);
    if (covering.length === 0) {
      const admission = this.#limiter.admit(person, call);
      return admission instanceof Promise
        ? admission.then(a => this.#refusalOf(a))
        : this.#refusalOf(admission);
    }
    return this.#underPlans(covering, request, person, call);
  }

  /** The person's live grants on the request's server, oldest first. */
  #coveringGrants(request: LimitedRequest): readonly StoredAccessGrant[] {
    if (this.#grants === undefined || !request.principal.startsWith('user:')) return [];
    return this.#grants
      .grantsOf(subjectOfPrincipal(request.principal))
      .filter(grant => grant.target.kind === 'server' && grant.target.name === request.server)
      .sort((a, b) => a.approvedAt - b.approvedAt);
  }

  /** Tries the grants in order (see the file comment). */
  async #underPlans(
    covering: readonly StoredAccessGrant[],
    request: LimitedRequest,
    person: { principal: string; groups: readonly string[] },
    call: { server: string; tool?: string },
  ): Promise<RateLimitDecision> {
    let earliest: { admission: Admission; grant: string } | undefined;
    for (const grant of covering) {
      const admission = await this.#limiter.admit(
        person,
        call,
        planLimitsOf(grant, request.principal, request.tool),
      );
      if (admission.admitted) return { kind: 'admitted', grant: grant.id };
      if (!isPlanLimit(admission.limit)) return this.#refusalOf(admission);
      if (
        earliest === undefined ||
        (!earliest.admission.admitted && admission.retryAfterMs < earliest.admission.retryAfterMs)
      ) {
        earliest = { admission, grant: grant.id };
      }
    }
    if (earliest === undefined) return undefined;
    const refusal = this.#refusalOf(earliest.admission);
    return refusal && { ...refusal, grant: earliest.grant };
  }

  /** The refusal of an admission that refused (undefined when admitted). */
  #refusalOf(admission: Admission): RateLimitRefusal | undefined {
    if (admission.admitted) return undefined;
    if (isPlanLimit(admission.limit)) {
      const limit = describePlanLimit(admission.limit);
      return {
        kind: 'limited',
        retryAfterMs: admission.retryAfterMs,
        limit,
        configuredAt: admission.limit.rule.at,
        limitSource: 'plan',
        error: planLimitedError(admission.retryAfterMs, limit),
      };
    }
    const limit = describeLimit(admission.limit.rule, admission.limit.limit, this.#toolCallsOnly);
    return {
      kind: 'limited',
      retryAfterMs: admission.retryAfterMs,
      limit,
      configuredAt: admission.limit.rule.at,
      limitSource: 'config',
      error: rateLimitedError(admission.retryAfterMs, limit),
    };
  }

  /**
   * What each quota of `grant`'s plan has counted for `principal` in its current window, in the
   * plan's order (RateLimiter.peek; the usage page's meters, docs/contracts/mcp-access.md §7.3).
   */
  planUsage(
    grant: StoredAccessGrant,
    principal: string,
  ): Promise<Array<{ used: number; windowEnd: number }>> {
    return Promise.all(planBudgetsOf(grant, principal).map(limit => this.#limiter.peek(limit)));
  }

  /** Stops the limiter's ticks. */
  close(): void {
    this.#limiter.close();
  }
}
