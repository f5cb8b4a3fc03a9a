/**
 * The change feed of the fake's storage, as etcd's watch serves kube-apiserver: every committed
 * change is appended once, in revision order, to a bounded history and handed at once to every
 * subscriber (the `WatchHub`).
 *
 * - the history holds at most `limit` events; dropping the oldest, like compaction, moves the
 *   oldest revision a watch can start from, and asking for an older one answers 410 Expired;
 * - `compact()` forgets history on request, as etcd compaction does;
 * - the `ObjectStore` reads the history backwards to rebuild a list as it was at an earlier
 *   revision (each event keeps the object before the change).
 */
import { expired } from './statusErrors';
import type { KubeObject } from './resources';

/** A change as watches see it. */
export interface StoreEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  resourceVersion: number;
  group: string;
  plural: string;
  namespace: string;
  object: KubeObject;
  /** The object before the change (MODIFIED/DELETED), for selector transitions. */
  previous?: KubeObject;
}

/** Options of {@link EventHistory}. */
export interface EventHistoryOptions {
  /** How many events watches can replay (older revisions answer 410). */
  limit: number;
  /** The revision before the first change (the storage's initial revision). */
  initialRevision: number;
}

/** The bounded, replayable history of store changes and their live fan-out; see the file comment. */
export class EventHistory {
  private readonly events: StoreEvent[] = [];
  /** Events with a revision at or below this are no longer replayable. */
  private compactedRevision: number;
  /** The revision of the newest change (the initial revision before the first). */
  private newestRevision: number;
  private readonly listeners = new Set<(event: StoreEvent) => void>();

  constructor(private readonly options: EventHistoryOptions) {
    this.compactedRevision = options.initialRevision;
    this.newestRevision = options.initialRevision;
  }

  /** The oldest revision a watch can still start from. */
  oldestWatchableRevision(): number {
    return this.compactedRevision;
  }

  /** Subscribes to every committed change; returns an unsubscribe function. */
  subscribe(listener: (event: StoreEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Events after `resourceVersion`, or 410 Expired when they were compacted away. */
  eventsSince(resourceVersion: number): StoreEvent[] {
    if (resourceVersion < this.compactedRevision) {
      throw expired(`too old resource version: ${resourceVersion} (${this.compactedRevision + 1})`);
    }
    return this.events.filter(e => e.resourceVersion > resourceVersion);
  }

  /**
   * The retained events after `revision`, newest first (what undoing changes back to `revision`
   * walks); no 410 check: the caller asks {@link EventHistory.oldestWatchableRevision} first.
   */
  *newestFirstAfter(revision: number): Iterable<StoreEvent> {
    for (let i = this.events.length - 1; i >= 0; i--) {
      const event = this.events[i];
      if (event.resourceVersion <= revision) return;
      yield event;
    }
  }

  /**
   * Forgets history up to `upTo` (default: everything), as etcd compaction does; never beyond
   * the newest change.
   */
  compact(upTo: number = this.newestRevision): void {
    const target = Math.min(upTo, this.newestRevision);
    while (this.events.length > 0 && this.events[0].resourceVersion <= target) {
      this.events.shift();
    }
    this.compactedRevision = Math.max(this.compactedRevision, target);
  }

  /**
   * Records a committed change (its revision is the newest) and hands it to every subscriber;
   * the oldest event goes when the history is over its limit.
   */
  append(event: StoreEvent): void {
    this.newestRevision = event.resourceVersion;
    this.events.push(event);
    while (this.events.length > this.options.limit) {
      const dropped = this.events.shift()!;
      this.compactedRevision = Math.max(this.compactedRevision, dropped.resourceVersion);
    }
    for (const listener of this.listeners) listener(event);
  }
}
