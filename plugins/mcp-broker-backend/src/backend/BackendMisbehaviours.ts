/*
 * What one backend MCP server did wrong that the broker noticed and absorbed (issue #41), for
 * `/status`: a count per class and when the last one happened. Counts only: never a payload,
 * an id or a message text, so nothing a backend sent (or a person's data in it) reaches the
 * status endpoint. Kept per backend connection, for its lifetime (a changed or removed server
 * starts again from zero), on this replica.
 */

/** The classes of misbehaviour the broker detects and counts. */
export const MISBEHAVIOUR_KINDS = [
  /** A message (answer, event or call stream item) that is not JSON-RPC. */
  'malformedMessages',
  /** A response carrying an id the broker did not send on that exchange. */
  'mismatchedIds',
  /** A message larger than the broker accepts (16 MiB); the exchange was cut off. */
  'oversizedMessages',
  /** A request or call the backend did not answer in time. */
  'timeouts',
  /** A list cut at `backendLimits.maxListItems` or `backendLimits.maxListPages`. */
  'truncatedLists',
  /** `list_changed` events folded into a re-list already running or pending. */
  'coalescedListChanged',
] as const;

/** One class of misbehaviour the broker detects. */
export type MisbehaviourKind = (typeof MISBEHAVIOUR_KINDS)[number];

/** How often one class happened, and when last (ISO time; absent while the count is 0). */
export interface MisbehaviourCount {
  count: number;
  lastAt?: string;
}

/** The counters of one backend on `/status`: every class, 0 where nothing happened. */
export type MisbehaviourCounts = Record<MisbehaviourKind, MisbehaviourCount>;

/** The misbehaviour counters of one backend; see the file comment. */
export class BackendMisbehaviours {
  private readonly counts = new Map<MisbehaviourKind, { count: number; lastAt: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Records `times` occurrences of `kind`, the last one now. */
  record(kind: MisbehaviourKind, times = 1): void {
    if (times <= 0) return;
    const entry = this.counts.get(kind);
    if (entry === undefined) this.counts.set(kind, { count: times, lastAt: this.now() });
    else {
      entry.count += times;
      entry.lastAt = this.now();
    }
  }

  /** How often `kind` happened so far. */
  count(kind: MisbehaviourKind): number {
    return this.counts.get(kind)?.count ?? 0;
  }

  /** Every class with its count and last time, for `/status`. */
  snapshot(): MisbehaviourCounts {
    const result = {} as MisbehaviourCounts;
    for (const kind of MISBEHAVIOUR_KINDS) {
      const entry = this.counts.get(kind);
      result[kind] =
        entry === undefined
          ? { count: 0 }
          : { count: entry.count, lastAt: new Date(entry.lastAt).toISOString() };
    }
    return result;
  }
}
