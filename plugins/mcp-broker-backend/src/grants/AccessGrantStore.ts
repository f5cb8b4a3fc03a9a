/*
 * The broker's feed of access grants (docs/contracts/mcp-access.md §5.3): the grants every
 * source wrote, each stored under its source's prefix (`portal:<id>`), ordered by one revision
 * counter so that a replica that has read everything up to revision R and then reads what is
 * newer than R never misses a change. A removal is final.
 */
import type { McpAccessGrant } from '@devportal/plugin-mcp-broker-node';

/** A grant as stored: ids and group prefixed with the source, the subject in lower case. */
export interface StoredAccessGrant extends McpAccessGrant {
  /** Feed revision of the row's last change. */
  readonly revision: number;
  /** Epoch ms; set when the grant was removed (a tombstone). */
  readonly removedAt?: number;
}

/** What one write changed: the new feed revision, or undefined when nothing changed. */
export type GrantWriteResult = { revision: number } | undefined;

/** What a store that announces its commits tells a reader of the feed (its index). */
export interface GrantFeedListener {
  /** A write was committed: a read from now on sees it. */
  changed(): void;
  /** From now on every commit is announced (called again after each reconnect). */
  listening(): void;
  /** Announcements stopped (`error` says why): commits may go unannounced until `listening`. */
  lost(error: unknown): void;
}

/** A listener's subscription to a store's announcements. */
export interface GrantFeedSubscription {
  /** Stops the announcements (shutdown). */
  close(): Promise<void>;
}

/** The feed's writes (one transaction each) and reads; see the file comment. */
export interface AccessGrantStore {
  /** Adds or changes grants; those with a tombstone are left removed. */
  upsert(grants: readonly McpAccessGrant[]): Promise<GrantWriteResult>;
  /** Removes the live grants among `ids`. */
  remove(ids: readonly string[]): Promise<GrantWriteResult>;
  /** Makes `grants` (all of `group`) the whole of live `group`. */
  replaceGroup(group: string, grants: readonly McpAccessGrant[]): Promise<GrantWriteResult>;
  /** Removes every live grant of `group`. */
  removeGroup(group: string): Promise<GrantWriteResult>;
  /**
   * A full sync of one source (contract mcp-access §5.3): `grants` (ids prefixed with
   * `<source>:`) are every live grant the source listed, in a walk that began when the feed was
   * at revision `since`. Upserts what differs and removes the source's live grants missing from
   * the list — except rows written after `since`, which a delta wrote from fresher data.
   */
  syncSource(
    source: string,
    grants: readonly McpAccessGrant[],
    since: number,
  ): Promise<GrantWriteResult>;
  /** The feed's current revision. */
  revision(): Promise<number>;
  /** Every change (live and removed rows) after `revision`, oldest first, and the feed's state. */
  readSince(revision: number): Promise<{
    changes: StoredAccessGrant[];
    revision: number;
    sweptThrough: number;
  }>;
  /** Every live grant, and the revision they are current at. */
  loadLive(): Promise<{ grants: StoredAccessGrant[]; revision: number }>;
  /**
   * Announces every write committed from now on, by any replica, to `listener` until the
   * subscription is closed; undefined when this store cannot (its readers then poll). Optional.
   */
  listen?(listener: GrantFeedListener): GrantFeedSubscription | undefined;
}
