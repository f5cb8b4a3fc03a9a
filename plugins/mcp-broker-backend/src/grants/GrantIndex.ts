/*
 * One replica's view of the access grants (docs/contracts/mcp-access.md §5.4): built from the
 * feed's live rows at start-up, then following the feed by revision (a read of what is newer
 * than the last revision applied), so access survives a restart without asking any source. A
 * read happens after a local write at once; when the store announces commits (PostgreSQL
 * `NOTIFY`, §5.3), on every announcement of another replica's write, and once each time the
 * announcements (re)start, for what was committed while nobody listened; and every `pollMs`, the
 * fallback for a lost announcement or a listening connection that is down (logged once per
 * episode). A read asked for while one runs is done after it, so no commit is left unread.
 *
 * - Per subject (a user entity ref, lower case): the live, unexpired grants, oldest approval
 *   first, and a version that changes whenever that set changes — by the feed, or because a grant
 *   expired (a timer at the earliest `expiresAt`, without the database).
 * - Freshness: when the last successful read is older than `staleAfterMs`, the index is stale: it
 *   answers no grants for anyone (it cannot know about revocations: it fails closed), every
 *   subject's version changes (an epoch), and a warning is logged once per episode. The next
 *   successful read makes it fresh again.
 * - A replica whose last revision is below the feed's `swept_through` (tombstones it never read
 *   were deleted) reloads the whole table.
 * - `onChange` listeners hear the subjects whose grants changed, or `'all'` on a staleness flip
 *   or a reload.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  AccessGrantStore,
  GrantFeedSubscription,
  StoredAccessGrant,
} from './AccessGrantStore';
import type { GrantLookup } from '../permissions/rules';

/** Default interval of the fallback read of the feed. */
export const GRANT_POLL_MS = 5_000;
/** Default age of the last successful read after which the index fails closed. */
export const GRANT_STALE_AFTER_MS = 15_000;
/** setTimeout's largest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Who changed: some subjects, or everyone. */
export type GrantChange = readonly string[] | 'all';

/** Options of {@link GrantIndex.create}. */
export interface GrantIndexOptions {
  store: AccessGrantStore;
  logger: LoggerService;
  pollMs?: number;
  staleAfterMs?: number;
  /** Epoch ms (tests pass their own clock). */
  now?: () => number;
}

/** See the file comment. */
export class GrantIndex implements GrantLookup {
  readonly #store: AccessGrantStore;
  readonly #logger: LoggerService;
  readonly #pollMs: number;
  readonly #staleAfterMs: number;
  readonly #now: () => number;
  /** Live grants by id. */
  #grants = new Map<string, StoredAccessGrant>();
  /** Live grants by subject, oldest approval first. */
  #bySubject = new Map<string, StoredAccessGrant[]>();
  readonly #versions = new Map<string, number>();
  #epoch = 0;
  /** Counts every change announced (a version of the whole index). */
  #changes = 0;
  #revision = 0;
  #freshAt = 0;
  #wasStale = false;
  #reading?: Promise<void>;
  /** The read asked for while one ran, done after it. */
  #next?: Promise<void>;
  #subscription?: GrantFeedSubscription;
  #notifications: 'none' | 'listening' | 'lost' = 'none';
  #poll?: NodeJS.Timeout;
  #expiry?: NodeJS.Timeout;
  readonly #listeners = new Set<(change: GrantChange) => void>();

  private constructor(options: GrantIndexOptions) {
    this.#store = options.store;
    this.#logger = options.logger;
    this.#pollMs = options.pollMs ?? GRANT_POLL_MS;
    this.#staleAfterMs = options.staleAfterMs ?? GRANT_STALE_AFTER_MS;
    this.#now = options.now ?? Date.now;
  }

  /**
   * Loads every live grant, then follows the feed (announcements where the store makes them,
   * and every `pollMs`) until {@link close}.
   */
  static async create(options: GrantIndexOptions): Promise<GrantIndex> {
    const index = new GrantIndex(options);
    await index.#reload();
    index.#subscription = index.#store.listen?.({
      changed: () => void index.refresh(),
      listening: () => index.#listening(),
      lost: error => index.#lost(error),
    });
    index.#poll = setInterval(() => void index.refresh(), index.#pollMs);
    index.#poll.unref();
    return index;
  }

  /**
   * Reads what changed since the last revision applied. One read at a time: a call while one
   * runs is answered by the next read, which starts when that one ends (it may have begun
   * before the caller's commit); callers meanwhile share it.
   */
  refresh(): Promise<void> {
    if (this.#reading === undefined) {
      this.#reading = this.#read().finally(() => {
        this.#reading = undefined;
      });
      return this.#reading;
    }
    this.#next ??= this.#reading.then(() => {
      this.#next = undefined;
      return this.refresh();
    });
    return this.#next;
  }

  /** True while the store announces every commit (reads then follow them at once). */
  get listening(): boolean {
    return this.#notifications === 'listening';
  }

  /** Whether the last successful read is recent enough to answer from. */
  isFresh(): boolean {
    return this.#now() - this.#freshAt <= this.#staleAfterMs;
  }

  /** The live, unexpired grants of `subject` (a user entity ref); none while stale. */
  grantsOf(subject: string): readonly StoredAccessGrant[] {
    this.#checkStaleness();
    if (!this.isFresh()) return [];
    const now = this.#now();
    const grants = this.#bySubject.get(subject.toLocaleLowerCase('en-US')) ?? [];
    return grants.filter(grant => grant.expiresAt === undefined || grant.expiresAt > now);
  }

  /** Changes whenever what {@link grantsOf} answers for `subject` may have changed. */
  versionOf(subject: string): string {
    this.#checkStaleness();
    const fresh = this.isFresh() ? 'fresh' : 'stale';
    return `${this.#epoch}:${fresh}:${this.#versions.get(subject.toLocaleLowerCase('en-US')) ?? 0}`;
  }

  /**
   * {@link GrantLookup}: whether one of `claims` holds a live grant on server `server` (endpoint
   * grants cover nothing until curated endpoints exist).
   */
  covers(claims: readonly string[], server: string): boolean {
    return claims.some(claim =>
      this.grantsOf(claim).some(g => g.target.kind === 'server' && g.target.name === server),
    );
  }

  /** Changes whenever what {@link grantsOf} answers for anyone may have changed. */
  version(): number {
    this.#checkStaleness();
    return this.#changes;
  }

  /** Listens to changes; returns the function that stops listening. */
  onChange(listener: (change: GrantChange) => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** How many live grants and subjects the index holds (for `/status`: counts only). */
  counts(): {
    grants: number;
    subjects: number;
    revision: number;
    fresh: boolean;
    /** Epoch ms of the last successful read (0: none yet). */
    freshAt: number;
  } {
    return {
      grants: this.#grants.size,
      subjects: this.#bySubject.size,
      revision: this.#revision,
      fresh: this.isFresh(),
      freshAt: this.#freshAt,
    };
  }

  /** Stops following the feed (and ends this index's share of the listening connection). */
  async close(): Promise<void> {
    clearInterval(this.#poll);
    clearTimeout(this.#expiry);
    const subscription = this.#subscription;
    this.#subscription = undefined;
    this.#notifications = 'none';
    await subscription?.close();
  }

  /** Announcements (re)started: read what was committed while nobody announced it. */
  #listening(): void {
    if (this.#notifications === 'lost') {
      this.#logger.info('Notified of MCP access grant changes again');
    }
    this.#notifications = 'listening';
    void this.refresh();
  }

  /** Announcements stopped: logged once until they are back; the poll covers the gap. */
  #lost(error: unknown): void {
    if (this.#subscription === undefined && this.#notifications === 'none') return; // closed
    if (this.#notifications !== 'lost') {
      this.#logger.warn(
        `Not notified of MCP access grant changes (reading the feed every ${this.#pollMs} ms ` +
          `until the listening connection is back): ${error}`,
      );
    }
    this.#notifications = 'lost';
  }

  async #read(): Promise<void> {
    try {
      const { changes, revision, sweptThrough } = await this.#store.readSince(this.#revision);
      if (sweptThrough > this.#revision) {
        await this.#reload();
        return;
      }
      const subjects = new Set<string>();
      for (const grant of changes) {
        const before = this.#grants.get(grant.id);
        if (before !== undefined) subjects.add(before.subject);
        subjects.add(grant.subject);
        if (grant.removedAt === undefined) this.#grants.set(grant.id, grant);
        else this.#grants.delete(grant.id);
      }
      this.#revision = Math.max(this.#revision, revision);
      this.#markFresh();
      if (subjects.size > 0) {
        this.#rebuildSubjects(subjects);
        this.#emit([...subjects]);
      }
    } catch (error) {
      this.#logger.warn(`Could not read the MCP access grants feed: ${error}`);
      this.#checkStaleness();
    }
  }

  async #reload(): Promise<void> {
    const { grants, revision } = await this.#store.loadLive();
    this.#grants = new Map(grants.map(grant => [grant.id, grant]));
    this.#revision = revision;
    this.#bySubject = new Map();
    this.#rebuildSubjects(new Set(grants.map(grant => grant.subject)));
    this.#epoch += 1;
    this.#markFresh();
    this.#emit('all');
  }

  /** Recomputes the grants of `subjects`, bumps their versions and re-arms the expiry timer. */
  #rebuildSubjects(subjects: ReadonlySet<string>): void {
    for (const subject of subjects) {
      this.#bySubject.delete(subject);
      this.#versions.set(subject, (this.#versions.get(subject) ?? 0) + 1);
    }
    for (const grant of this.#grants.values()) {
      if (!subjects.has(grant.subject)) continue;
      const list = this.#bySubject.get(grant.subject) ?? [];
      list.push(grant);
      this.#bySubject.set(grant.subject, list);
    }
    for (const subject of subjects) {
      this.#bySubject.get(subject)?.sort((a, b) => a.approvedAt - b.approvedAt);
    }
    this.#armExpiry();
  }

  /** A timer at the earliest future expiry: the subjects whose grant expired change then. */
  #armExpiry(): void {
    clearTimeout(this.#expiry);
    const now = this.#now();
    let next: number | undefined;
    for (const grant of this.#grants.values()) {
      if (grant.expiresAt !== undefined && grant.expiresAt > now)
        next = next === undefined ? grant.expiresAt : Math.min(next, grant.expiresAt);
    }
    if (next === undefined) return;
    this.#expiry = setTimeout(() => this.#expire(), Math.min(next - now, MAX_TIMER_MS));
    this.#expiry.unref();
  }

  #expire(): void {
    const now = this.#now();
    const expired = new Set<string>();
    for (const [id, grant] of this.#grants) {
      if (grant.expiresAt === undefined || grant.expiresAt > now) continue;
      expired.add(grant.subject);
      this.#grants.delete(id);
    }
    if (expired.size > 0) {
      this.#rebuildSubjects(expired);
      this.#emit([...expired]);
    } else this.#armExpiry();
  }

  #markFresh(): void {
    this.#freshAt = this.#now();
    if (this.#wasStale) {
      this.#wasStale = false;
      this.#logger.info('The MCP access grants feed is read again; grants apply again');
      this.#epoch += 1;
      this.#emit('all');
    }
  }

  /** Notices the index went stale (logged once per episode; everyone's version changes). */
  #checkStaleness(): void {
    if (this.#wasStale || this.isFresh()) return;
    this.#wasStale = true;
    this.#epoch += 1;
    this.#logger.warn(
      `The MCP access grants feed was not read for over ${this.#staleAfterMs} ms: no grant ` +
        'applies until it is read again (access by grant fails closed)',
    );
    this.#emit('all');
  }

  #emit(change: GrantChange): void {
    this.#changes += 1;
    for (const listener of this.#listeners) {
      try {
        listener(change);
      } catch (error) {
        this.#logger.warn(`A listener of MCP access grant changes failed: ${error}`);
      }
    }
  }
}
