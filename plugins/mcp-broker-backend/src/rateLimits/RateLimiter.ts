/*
 * Counts each person's tool calls against the limits RateLimitRules chose, and refuses a call
 * when one of its budgets is spent (with the time until the budget's window ends).
 *
 * Windows are fixed: a limit of N calls per W counts calls in [k·W, (k+1)·W) of the epoch, the
 * same boundaries on every replica (their clocks are assumed to agree to well under a window).
 * Like every fixed-window counter it admits up to 2·N across the boundary of two windows.
 *
 * One replica (no QuotaStore, `mcpBroker.sessionStore: memory`): the counts are this process's,
 * exact.
 *
 * Several replicas (a QuotaStore on the shared database): a replica takes quota from the
 * window's shared count in leases — one atomic statement grants up to a lease of units, never
 * more than the window has left — and admits calls from its lease in memory: no database round
 * trip per call, one per lease. A lease is a tenth of the limit divided among the other live
 * replicas (at least one unit), so
 *   - the total admitted in a window across replicas never exceeds N while the database is
 *     reachable (every admitted unit was granted by the store), and
 *   - a person is refused no earlier than after 0.9·N calls in the window: only units leased by
 *     other replicas and not used there (at most a tenth of N together) are out of reach.
 * A lease is waited for at most a second (DEFAULT_LEASE_WAIT_MS); a lease that fails or takes longer counts as the
 * database being unreachable, and the replica then enforces its own share of each limit alone:
 * ⌈N ÷ live replicas⌉ calls per window (counting what it leased), live replicas being those whose
 * presence mark the store last showed (replicas/ReplicaPresence.ts). What it admits meanwhile is added to the shared count once the
 * store answers again (in the same window). So a replica that loses the database adds at most
 * its share to the window's total.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  AppliedLimit,
  RateLimitedCall,
  RateLimitedPerson,
  RateLimitRules,
} from './RateLimitRules';

/** The shared count of every budget's windows (the plugin's database). */
export interface QuotaStore {
  /**
   * Takes up to `wanted` units of `budget`'s window that ends at `windowEnd` (epoch ms), whose
   * total is `limit`; resolves with the units granted (0 when the window is spent). Atomic
   * across replicas: the grants of one window never add up to more than `limit`.
   */
  lease(budget: string, windowEnd: number, limit: number, wanted: number): Promise<number>;
  /** Adds `units` admitted without a lease (the store was unreachable) to the window's count. */
  record(budget: string, windowEnd: number, units: number): Promise<void>;
  /**
   * Drops windows that ended before `now` and resolves with the number of live replicas (those
   * with a current presence mark, replicas/ReplicaPresence.ts; this one included).
   */
  liveReplicas(now: number): Promise<number>;
  /** The units granted so far in `budget`'s window that ends at `windowEnd` (0 for none). */
  used?(budget: string, windowEnd: number): Promise<number>;
}

/** A call's admission: admitted, or refused with when to retry and which limit refused it. */
export type Admission =
  | { readonly admitted: true }
  | { readonly admitted: false; readonly retryAfterMs: number; readonly limit: AppliedLimit };

/** What one replica knows of one budget's current window. */
interface Budget {
  windowEnd: number;
  /** Units leased and not used yet. */
  available: number;
  /** Units the store granted this replica in this window. */
  leased: number;
  /** Calls admitted here in this window. */
  used: number;
  /** Calls admitted beyond the leases while the store was unreachable (not yet recorded). */
  unrecorded: number;
  /** The store said the window has nothing left. */
  spent: boolean;
  /** A lease in flight (concurrent calls wait for the same one). */
  leasing?: Promise<void>;
  /** Calls waiting for a lease: the next lease asks for at least this many units. */
  waiting: number;
}

/** Share of a limit that all other replicas' leases may hold together (the tolerance). */
export const LEASE_SHARE = 0.1;
/** Longest a call waits for a lease before the replica counts on its own share. */
export const DEFAULT_LEASE_WAIT_MS = 1000;
/** After the store failed, how long the replica counts on its own share before asking again. */
export const STORE_RETRY_MS = 1000;
/** How often the limiter learns the live replicas and drops ended windows from memory. */
export const TICK_MS = 10_000;

const ADMITTED: Admission = Object.freeze({ admitted: true });

/** Of two refusals, the one that asks to wait longer (a call needs every budget). */
function laterRefusal(current: Admission | undefined, next: Admission): Admission {
  if (current === undefined || current.admitted || next.admitted) return next;
  return next.retryAfterMs > current.retryAfterMs ? next : current;
}

/**
 * True when `promise` settles within `ms` (its failure is the store's business, not ours). When
 * the timer fires, answers only after the poll phase of that turn of the event loop: an answer
 * that arrived while the process was busy (a blocked loop runs timers first) still counts.
 */
function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  return new Promise(resolve => {
    let settled = false;
    const timer = setTimeout(() => setImmediate(() => resolve(settled)), ms);
    timer.unref();
    const done = () => {
      settled = true;
      clearTimeout(timer);
      resolve(true);
    };
    promise.then(done, done);
  });
}

/** Options of {@link RateLimiter.create}. */
export interface RateLimiterOptions {
  rules: RateLimitRules;
  /** The shared count (several replicas); absent: this process counts alone. */
  store?: QuotaStore;
  logger: LoggerService;
  /** Epoch milliseconds (tests pass their own clock). */
  now?: () => number;
  /** Longest a call waits for a lease; default {@link DEFAULT_LEASE_WAIT_MS}. */
  leaseWaitMs?: number;
}

/** Counts calls against budgets; see the file comment. */
export class RateLimiter {
  readonly #rules: RateLimitRules;
  readonly #store: QuotaStore | undefined;
  readonly #logger: LoggerService;
  readonly #now: () => number;
  readonly #budgets = new Map<string, Budget>();
  readonly #timer: NodeJS.Timeout;
  readonly #leaseWaitMs: number;
  #liveReplicas = 1;
  #storeDownUntil = 0;
  #storeWasDown = false;

  static create(options: RateLimiterOptions): RateLimiter {
    return new RateLimiter(options);
  }

  private constructor(options: RateLimiterOptions) {
    this.#rules = options.rules;
    this.#store = options.store;
    this.#logger = options.logger;
    this.#now = options.now ?? Date.now;
    this.#leaseWaitMs = options.leaseWaitMs ?? DEFAULT_LEASE_WAIT_MS;
    this.#timer = setInterval(() => void this.tick(), TICK_MS);
    this.#timer.unref();
    void this.tick();
  }

  /** True when some limit names groups (callers then pass the person's groups). */
  get needsGroups(): boolean {
    return this.#rules.needsGroups;
  }

  /** Live replicas as the store last showed them (1 without a store). */
  get liveReplicas(): number {
    return this.#liveReplicas;
  }

  /**
   * Admits `person`'s `call` (counting it against every budget that holds for it, the configured
   * ones and `extra` — a plan's, see planLimits.ts — all or none) or refuses it:
   * at once while its budgets have leased units (the usual case), else once the store answered,
   * waiting at most the lease wait.
   */
  admit(
    person: RateLimitedPerson,
    call: RateLimitedCall,
    extra: readonly AppliedLimit[] = [],
  ): Admission | Promise<Admission> {
    const configured = this.#rules.limitsFor(person, call);
    const limits = extra.length === 0 ? configured : [...configured, ...extra];
    if (limits.length === 0) return ADMITTED;
    const first = this.#round(limits);
    return 'leasing' in first ? this.#afterLeases(limits, first.leasing) : first;
  }

  /**
   * One look at the budgets of `limits`: admitted (counted), refused, or the budgets that need a
   * lease first.
   */
  #round(limits: readonly AppliedLimit[]): Admission | { leasing: Array<[Budget, AppliedLimit]> } {
    const now = this.#now();
    const budgets: Budget[] = [];
    let refusal: Admission | undefined;
    let leasing: Array<[Budget, AppliedLimit]> | undefined;
    for (let i = 0; i < limits.length; i += 1) {
      const limit = limits[i];
      const budget = this.#budget(limit, now);
      budgets.push(budget);
      if (this.#hasUnit(budget, limit, now)) continue;
      if (this.#store === undefined || budget.spent || this.#storeDown(now)) {
        refusal = laterRefusal(refusal, {
          admitted: false,
          retryAfterMs: Math.max(1, budget.windowEnd - now),
          limit,
        });
        continue;
      }
      (leasing ??= []).push([budget, limit]);
    }
    if (refusal !== undefined) return refusal;
    if (leasing !== undefined) return { leasing };
    for (const budget of budgets) this.#take(budget);
    return ADMITTED;
  }

  /**
   * Takes the leases, then looks again. Ends: every round either admits, refuses, or waits for
   * leases that grant units (progress in a finite window), find the window spent (a refusal
   * next round) or fail (the replica's share next round).
   */
  async #afterLeases(
    limits: readonly AppliedLimit[],
    first: Array<[Budget, AppliedLimit]>,
  ): Promise<Admission> {
    let leasing = first;
    for (;;) {
      for (const [budget] of leasing) budget.waiting += 1;
      try {
        const leases = leasing.map(([budget, limit]) => this.#lease(budget, limit));
        if (!(await settlesWithin(Promise.all(leases), this.#leaseWaitMs))) {
          this.#storeFailed(new Error(`no lease within ${this.#leaseWaitMs} ms`));
        }
      } finally {
        for (const [budget] of leasing) budget.waiting -= 1;
      }
      const next = this.#round(limits);
      if (!('leasing' in next)) return next;
      leasing = next.leasing;
    }
  }

  /**
   * What `limit`'s budget has counted in its current window, and when that window ends (epoch
   * ms): with a shared store, the window's shared count (leased units included, so it may run
   * ahead of the calls by the leases' tolerance); without one, or when the store cannot answer,
   * this replica's count. Counts nothing.
   */
  async peek(limit: AppliedLimit): Promise<{ used: number; windowEnd: number }> {
    const now = this.#now();
    const windowEnd = (Math.floor(now / limit.limit.windowMs) + 1) * limit.limit.windowMs;
    const budget = this.#budgets.get(limit.budget);
    const local = budget?.windowEnd === windowEnd ? budget.used : 0;
    if (this.#store?.used === undefined) return { used: local, windowEnd };
    try {
      const shared = await this.#store.used(limit.budget, windowEnd);
      return { used: Math.max(shared, local), windowEnd };
    } catch {
      return { used: local, windowEnd };
    }
  }

  /** Stops the ticks. */
  close(): void {
    clearInterval(this.#timer);
  }

  /** One tick: learns the live replicas and drops ended windows (also without a store). */
  async tick(): Promise<void> {
    const now = this.#now();
    for (const [key, budget] of this.#budgets) {
      if (budget.windowEnd <= now && budget.leasing === undefined) this.#budgets.delete(key);
    }
    if (this.#store === undefined) return;
    try {
      this.#liveReplicas = Math.max(1, await this.#store.liveReplicas(now));
      this.#storeAnswered();
    } catch (error) {
      this.#storeFailed(error);
    }
  }

  /** The budget of `limit` for the window of `now` (a new window starts empty). */
  #budget(limit: AppliedLimit, now: number): Budget {
    const windowEnd = (Math.floor(now / limit.limit.windowMs) + 1) * limit.limit.windowMs;
    let budget = this.#budgets.get(limit.budget);
    if (budget === undefined || budget.windowEnd !== windowEnd) {
      budget = {
        windowEnd,
        available: 0,
        leased: 0,
        used: 0,
        unrecorded: 0,
        spent: false,
        waiting: 0,
      };
      this.#budgets.set(limit.budget, budget);
    }
    return budget;
  }

  /** Whether a call may be counted against `budget` now (without asking the store). */
  #hasUnit(budget: Budget, limit: AppliedLimit, now: number): boolean {
    if (this.#store === undefined) return budget.used < limit.limit.calls;
    if (budget.available > 0) return true;
    // Unreachable store: this replica's share of the limit, counting what it leased.
    if (this.#storeDown(now)) return budget.used < Math.max(budget.leased, this.#share(limit));
    return false;
  }

  #take(budget: Budget): void {
    budget.used += 1;
    if (this.#store === undefined) return;
    if (budget.available > 0) budget.available -= 1;
    else budget.unrecorded += 1;
  }

  #share(limit: AppliedLimit): number {
    return Math.ceil(limit.limit.calls / this.#liveReplicas);
  }

  #leaseSize(limit: AppliedLimit): number {
    const others = Math.max(1, this.#liveReplicas - 1);
    return Math.max(1, Math.floor((limit.limit.calls * LEASE_SHARE) / others));
  }

  #storeDown(now: number): boolean {
    return now < this.#storeDownUntil;
  }

  /** Takes a lease for `budget` (one in flight per budget; its result lands in the budget). */
  #lease(budget: Budget, limit: AppliedLimit): Promise<void> {
    budget.leasing ??= this.#askStore(budget, limit).finally(() => {
      budget.leasing = undefined;
    });
    return budget.leasing;
  }

  async #askStore(budget: Budget, limit: AppliedLimit): Promise<void> {
    const store = this.#store!;
    try {
      if (budget.unrecorded > 0) {
        const units = budget.unrecorded;
        await store.record(limit.budget, budget.windowEnd, units);
        budget.unrecorded -= units;
        budget.leased += units;
      }
      // Calls waiting now take their units at once, so asking for them holds nothing back.
      const wanted = Math.max(this.#leaseSize(limit), budget.waiting);
      const granted = await store.lease(limit.budget, budget.windowEnd, limit.limit.calls, wanted);
      budget.leased += granted;
      budget.available += granted;
      if (granted === 0) budget.spent = true;
      this.#storeAnswered();
    } catch (error) {
      this.#storeFailed(error);
    }
  }

  #storeAnswered(): void {
    if (!this.#storeWasDown) return;
    this.#storeWasDown = false;
    this.#logger.info('MCP broker rate limits: the database answers again; counting shared quota');
  }

  #storeFailed(error: unknown): void {
    this.#storeDownUntil = this.#now() + STORE_RETRY_MS;
    if (this.#storeWasDown) return;
    this.#storeWasDown = true;
    this.#logger.warn(
      `MCP broker rate limits: the database is unreachable or slow; each limit counts this replica's share (1/${this.#liveReplicas}) until it answers: ${error}`,
    );
  }
}
