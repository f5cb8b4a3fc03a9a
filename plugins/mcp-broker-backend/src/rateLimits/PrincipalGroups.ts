/*
 * A person's groups, for limits that name a group: Backstage's user info (`ownershipEntityRefs`,
 * from the catalog), asked once per principal and remembered for GROUPS_MAX_AGE_MS, so a call
 * costs no round trip (concurrent first calls share one question, PrincipalDecisionCache).
 *
 * Failure closes: when the user info cannot be had, the person's groups are unknown and
 * `groupsOf` rejects with GroupsUnavailableError (the request is refused as retryable, see
 * RequestRateLimits): counting them in no group would lift a stricter group limit, counting them
 * in every group would lift nothing but could apply a stranger's. A failed look-up is not
 * remembered per person, but for GROUPS_RETRY_MS nobody is asked again (an outage of the auth
 * backend does not cost a round trip per request); the refusal says when to retry.
 */
import type {
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { PrincipalDecisionCache } from '../permissions/PrincipalDecisionCache';

/** How long a person's groups are used before they are asked again. */
export const GROUPS_MAX_AGE_MS = 60_000;
/** After a failed look-up, how long every look-up is refused before the user info is asked again. */
export const GROUPS_RETRY_MS = 5_000;

/** Remembered per principal; the cache ties entries to a version, which never changes here. */
const NO_VERSION = 'groups';

/** The person's groups could not be read: limits that name groups cannot be applied yet. */
export class GroupsUnavailableError extends Error {
  constructor(readonly retryAfterMs: number) {
    super('the groups of the caller could not be read');
    this.name = 'GroupsUnavailableError';
  }
}

/** Options of {@link PrincipalGroups.create}. */
export interface PrincipalGroupsOptions {
  userInfo: UserInfoService;
  logger: LoggerService;
  /** Milliseconds clock (tests). */
  now?: () => number;
}

/** Looks up and remembers each principal's group refs; see the file comment. */
export class PrincipalGroups {
  readonly #userInfo: UserInfoService;
  readonly #logger: LoggerService;
  readonly #now: () => number;
  readonly #cache: PrincipalDecisionCache<readonly string[]>;
  /** Until when (epoch ms) look-ups are refused after a failure. */
  #unavailableUntil = 0;

  static create(options: PrincipalGroupsOptions): PrincipalGroups {
    return new PrincipalGroups(options);
  }

  private constructor(options: PrincipalGroupsOptions) {
    this.#userInfo = options.userInfo;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#cache = new PrincipalDecisionCache({ maxAgeMs: GROUPS_MAX_AGE_MS, now: options.now });
  }

  /**
   * The group refs (`group:<namespace>/<name>`, lower case) of `principal`; `credentials` is
   * called only when they must be asked for. A service principal is in no group. Rejects with
   * {@link GroupsUnavailableError} when they cannot be read.
   */
  groupsOf(
    principal: string,
    credentials: () => Promise<BackstageCredentials>,
  ): Promise<readonly string[]> {
    if (!principal.startsWith('user:')) return Promise.resolve([]);
    return this.#cache.get(principal, NO_VERSION, async () => {
      const wait = this.#unavailableUntil - this.#now();
      if (wait > 0) throw new GroupsUnavailableError(wait);
      try {
        const info = await this.#userInfo.getUserInfo(await credentials());
        return info.ownershipEntityRefs
          .map(ref => ref.toLowerCase())
          .filter(ref => ref.startsWith('group:'));
      } catch (error) {
        this.#unavailableUntil = this.#now() + GROUPS_RETRY_MS;
        this.#logger.warn(
          `MCP broker rate limits: could not read the groups of ${principal}; their requests are refused (retryable) until the groups can be read, next attempt in ${GROUPS_RETRY_MS} ms: ${error}`,
        );
        throw new GroupsUnavailableError(GROUPS_RETRY_MS);
      }
    });
  }
}
