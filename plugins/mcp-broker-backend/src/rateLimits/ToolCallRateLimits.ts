/*
 * The rate-limit step of a tool call's admission: whose call it is (principal, and their groups
 * when an entry names groups), which limits hold (RateLimitRules), whether each budget has a unit
 * left (RateLimiter), and, when one does not, the refusal the client gets. Knows nothing of HTTP.
 */
import type {
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import type { JsonRpcErrorObject } from '../protocol/jsonRpc';
import { rateLimitedError } from '../protocol/rateLimited';
import { PrincipalGroups } from './PrincipalGroups';
import type { RateLimitConfig } from './rateLimitConfig';
import { describeLimit, RateLimitRules } from './RateLimitRules';
import { RateLimiter, type Admission, type QuotaStore } from './RateLimiter';

/** A tool call about to be forwarded. */
export interface LimitedToolCall {
  /** `user:<entity ref>` or `service:<subject>`. */
  principal: string;
  /** The request's credentials, asked only when the person's groups must be read. */
  credentials: () => Promise<BackstageCredentials>;
  /** The configured server and the backend's own tool name. */
  server: string;
  tool: string;
}

/** Why a call was refused, and what the client is told. */
export interface RateLimitRefusal {
  readonly retryAfterMs: number;
  /** The limit in words ("5 tool calls per minute on server …"). */
  readonly limit: string;
  /** Where that limit is configured (`mcpBroker.rateLimits.overrides[1]`). */
  readonly configuredAt: string;
  /** The JSON-RPC error (-32000, `data: { reason: "rate-limited", retryAfterMs }`). */
  readonly error: JsonRpcErrorObject;
}

const NO_GROUPS: readonly string[] = [];

/** The refusal of an admission that refused (undefined when admitted). */
function refusalOf(admission: Admission): RateLimitRefusal | undefined {
  if (admission.admitted) return undefined;
  const limit = describeLimit(admission.limit.rule, admission.limit.limit);
  return {
    retryAfterMs: admission.retryAfterMs,
    limit,
    configuredAt: admission.limit.rule.at,
    error: rateLimitedError(admission.retryAfterMs, limit),
  };
}

/** Options of {@link ToolCallRateLimits.create}. */
export interface ToolCallRateLimitsOptions {
  config: RateLimitConfig;
  /** The shared count (several replicas, `sessionStore: database`); absent: counted here. */
  store?: QuotaStore;
  userInfo: UserInfoService;
  logger: LoggerService;
  now?: () => number;
}

/** Admits or refuses tool calls by `mcpBroker.rateLimits`; see the file comment. */
export class ToolCallRateLimits {
  readonly #limiter: RateLimiter;
  readonly #groups: PrincipalGroups | undefined;

  /** The step for `config`, or undefined when no limit is configured (nothing to count). */
  static create(options: ToolCallRateLimitsOptions): ToolCallRateLimits | undefined {
    const rules = RateLimitRules.of(options.config);
    if (rules.empty) return undefined;
    return new ToolCallRateLimits(rules, options);
  }

  private constructor(rules: RateLimitRules, options: ToolCallRateLimitsOptions) {
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
  }

  /**
   * Counts the call, or gives its refusal (nothing counted then): at once in the usual case,
   * else (a person's groups to read, a lease to take) as a promise.
   */
  admit(
    call: LimitedToolCall,
  ): RateLimitRefusal | undefined | Promise<RateLimitRefusal | undefined> {
    if (this.#groups === undefined) return this.#decide(call, NO_GROUPS);
    return this.#groups
      .groupsOf(call.principal, call.credentials)
      .then(groups => this.#decide(call, groups));
  }

  #decide(
    call: LimitedToolCall,
    groups: readonly string[],
  ): RateLimitRefusal | undefined | Promise<RateLimitRefusal | undefined> {
    const admission = this.#limiter.admit(
      { principal: call.principal, groups },
      { server: call.server, tool: call.tool },
    );
    return admission instanceof Promise ? admission.then(refusalOf) : refusalOf(admission);
  }

  /** Stops the limiter's heartbeat. */
  close(): void {
    this.#limiter.close();
  }
}
