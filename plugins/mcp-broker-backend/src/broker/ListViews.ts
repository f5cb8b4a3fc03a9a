/*
 * Whose view of a list a catalog change can have altered, so that list_changed goes only to the
 * clients that can see a difference (spec §8: each principal sees only what it may use). The
 * broker asks before it sends; the answer comes from the permission decisions
 * (permissions/BrokerAccessControl), which this folder does not know.
 */
import type { AggregatedCatalog, ViewKind } from './AggregatedCatalog';

/** One change of one kind of list, as the broker is about to announce it. */
export interface ListChange {
  kind: ViewKind;
  /** The catalog clients last heard of, and the one they will list now. */
  previous: AggregatedCatalog;
  next: AggregatedCatalog;
  /** True when the lists of `kind` differ between the two catalogs (for anyone). */
  visible: boolean;
  /**
   * Servers that announced a change of `kind` themselves (their `list_changed`); when nothing
   * visible changed, the announcement is passed on to whoever sees anything of theirs.
   */
  announcedBy: ReadonlySet<string>;
}

/** Tells, per viewer (a client stream's credential), whether a change can concern it. */
export interface ListViews {
  /**
   * False only when the change cannot concern `viewer`: a visible change that leaves its
   * permitted view of `change.kind` as it was, or an announcement (nothing visible changed) of
   * servers of which it may see nothing of that kind (denied that kind, or, under conditions,
   * holding no item of theirs).
   */
  mayHaveChanged(viewer: string, change: ListChange): boolean;
}
