/*
 * A person's groups, for limits that name a group: Backstage's user info (`ownershipEntityRefs`,
 * from the catalog), asked once per principal and remembered for GROUPS_MAX_AGE_MS, so a call
 * costs no round trip (concurrent first calls share one question, PrincipalDecisionCache).
 *
 * Failure: when the user info cannot be had, the person counts as in no group (the limits for
 * everyone hold), with a warning; that answer is remembered like any other, so an outage of the
 * auth backend does not cost a round trip per call.
 */
import type {
  BackstageCredentials,
  LoggerService,
  UserInfoService,
} from '@backstage/backend-plugin-api';
import { PrincipalDecisionCache } from '../permissions/PrincipalDecisionCache';

/** How long a person's groups are used before they are asked again. */
export const GROUPS_MAX_AGE_MS = 60_000;

/** Remembered per principal; the cache ties entries to a version, which never changes here. */
const NO_VERSION = 'groups';

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
  readonly #cache: PrincipalDecisionCache<readonly string[]>;

  static create(options: PrincipalGroupsOptions): PrincipalGroups {
    return new PrincipalGroups(options);
  }

  private constructor(options: PrincipalGroupsOptions) {
    this.#userInfo = options.userInfo;
    this.#logger = options.logger;
    this.#cache = new PrincipalDecisionCache({ maxAgeMs: GROUPS_MAX_AGE_MS, now: options.now });
  }

  /**
   * The group refs (`group:<namespace>/<name>`, lower case) of `principal`; `credentials` is
   * called only when they must be asked for. A service principal is in no group.
   */
  groupsOf(
    principal: string,
    credentials: () => Promise<BackstageCredentials>,
  ): Promise<readonly string[]> {
    if (!principal.startsWith('user:')) return Promise.resolve([]);
    return this.#cache.get(principal, NO_VERSION, async () => {
      try {
        const info = await this.#userInfo.getUserInfo(await credentials());
        return info.ownershipEntityRefs
          .map(ref => ref.toLowerCase())
          .filter(ref => ref.startsWith('group:'));
      } catch (error) {
        this.#logger.warn(
          `MCP broker rate limits: could not read the groups of ${principal}; the limits for everyone hold for them: ${error}`,
        );
        return [];
      }
    });
  }
}
