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
 */
import type {
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import { clientRequestMethod } from '../protocol/mcpMethods';
import { limitsUnavailableError, rateLimitedError } from '../protocol/rateLimited';
import { GroupsUnavailableError, PrincipalGroups } from './PrincipalGroups';
import type { RateLimitConfig } from './rateLimitConfig';
import { describeLimit, RateLimitRules } from './RateLimitRules';
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
  /** Where that limit is configured (`mcpBroker.rateLimits.overrides[1]`). */
  readonly configuredAt: string;
  /** The JSON-RPC error (-32000, `data: { reason, retryAfterMs }`). */
  readonly error: JsonRpcErrorObject;
}

const NO_GROUPS: readonly string[] = [];

/** Options of {@link RequestRateLimits.create}. */
export interface RequestRateLimitsOptions {
  config: RateLimitConfig;
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

  /** The step for `config`, or undefined when no limit is configured (nothing to count). */
  static create(options: RequestRateLimitsOptions): RequestRateLimits | undefined {
    const rules = RateLimitRules.of(options.config);
    if (rules.empty) return undefined;
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
    const { methods } = options.config;
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
  admit(
    request: LimitedRequest,
  ): RateLimitRefusal | undefined | Promise<RateLimitRefusal | undefined> {
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
          error: limitsUnavailableError(error.retryAfterMs),
        };
        return refusal;
      },
    );
  }

  #decide(
    request: LimitedRequest,
    groups: readonly string[],
  ): RateLimitRefusal | undefined | Promise<RateLimitRefusal | undefined> {
    const admission = this.#limiter.admit(
      { principal: request.principal, groups },
      { server: request.server, ...(request.tool === undefined ? {} : { tool: request.tool }) },
    );
    return admission instanceof Promise
      ? admission.then(a => this.#refusalOf(a))
      : this.#refusalOf(admission);
  }

  /** The refusal of an admission that refused (undefined when admitted). */
  #refusalOf(admission: Admission): RateLimitRefusal | undefined {
    if (admission.admitted) return undefined;
    const limit = describeLimit(admission.limit.rule, admission.limit.limit, this.#toolCallsOnly);
    return {
      kind: 'limited',
      retryAfterMs: admission.retryAfterMs,
      limit,
      configuredAt: admission.limit.rule.at,
      error: rateLimitedError(admission.retryAfterMs, limit),
    };
  }

  /** Stops the limiter's ticks. */
  close(): void {
    this.#limiter.close();
  }
}
