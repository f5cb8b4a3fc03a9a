/*
 * Remembers one permission decision per key — a credential: the principal and its token, as
 * BrokerAccessControl keys it — for one catalog version, for at most
 * `maxAgeMs` (spec §8: a policy change lands within 30 s; a catalog change is decided again at
 * once). Concurrent requests of a principal whose entry is missing or stale share ONE decision
 * in flight, so a burst of 50 calls costs one round trip, not 50.
 *
 * Guarantees: a value is never served for another catalog version, nor after `maxAgeMs` from
 * the moment it was asked for (counted from the start of the decision, so a slow permission
 * backend cannot extend it); a failed decision is never remembered (the next request asks
 * again); memory is bounded by `maxEntries` principals (the least recently decided makes room),
 * and expired decisions are dropped as new ones arrive, so an idle principal does not keep an
 * old catalog alive for long.
 */

/** Options of {@link PrincipalDecisionCache}. */
export interface PrincipalDecisionCacheOptions {
  /** Longest time a decision is used; at most the spec's 30 s. */
  maxAgeMs: number;
  /** Most principals remembered at once; default {@link DEFAULT_DECISION_CACHE_MAX_PRINCIPALS}. */
  maxEntries?: number;
  /** Milliseconds clock; tests pass fake timers' Date.now. */
  now?: () => number;
}

/** Default bound of remembered principals (each entry is a few KiB at most). */
export const DEFAULT_DECISION_CACHE_MAX_PRINCIPALS = 10_000;

interface Entry<T> {
  version: unknown;
  askedAt: number;
  value: Promise<T>;
}

/** Per-principal decisions, tied to a catalog version and a maximum age. */
export class PrincipalDecisionCache<T> {
  readonly #maxAgeMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** Insertion order is decision order: the first key is the oldest decision. */
  readonly #entries = new Map<string, Entry<T>>();

  constructor(options: PrincipalDecisionCacheOptions) {
    this.#maxAgeMs = options.maxAgeMs;
    this.#maxEntries = options.maxEntries ?? DEFAULT_DECISION_CACHE_MAX_PRINCIPALS;
    this.#now = options.now ?? Date.now;
  }

  /** Number of principals remembered (stale entries included until replaced or evicted). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The principal's decision for `version` (compared with `===`): the remembered one while it is
   * fresh, else the result of `decide()`, shared with every concurrent caller.
   */
  get(principal: string, version: unknown, decide: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(principal);
    const now = this.#now();
    if (entry !== undefined && entry.version === version && now - entry.askedAt < this.#maxAgeMs) {
      return entry.value;
    }
    const value = decide();
    const fresh: Entry<T> = { version, askedAt: now, value };
    this.#entries.delete(principal);
    // Insertion order is decision order: expired entries (which would hold on to an old catalog)
    // and, beyond maxEntries, the oldest decisions go first.
    for (const [oldest, old] of this.#entries) {
      const expired = now - old.askedAt >= this.#maxAgeMs;
      if (!expired && this.#entries.size < this.#maxEntries) break;
      this.#entries.delete(oldest);
    }
    this.#entries.set(principal, fresh);
    value.catch(() => {
      // Forget a failure (only if nothing newer replaced it): the next request asks again.
      if (this.#entries.get(principal) === fresh) this.#entries.delete(principal);
    });
    return value;
  }

  /** Forgets every decision. */
  clear(): void {
    this.#entries.clear();
  }
}
