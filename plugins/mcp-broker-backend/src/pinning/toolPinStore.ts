/*
 * The records of pinned tool definitions (spec §13) and the store that keeps them. Every write is
 * one conditional statement, so that replicas seeing the same change at once record it once:
 * the write that changed the row answers true, and only its replica reports the change (log,
 * audit, notification).
 */
import type { PinnedDefinition } from './toolDigest';

/** A changed definition waiting for a decision (`held`), or refused (`rejected`). */
export interface PendingToolChange {
  readonly digest: string;
  readonly definition: PinnedDefinition;
  readonly state: 'held' | 'rejected';
  /** Epoch ms: when the change was first seen. */
  readonly since: number;
  /** Who rejected it. */
  readonly decidedBy?: string;
}

/** One tool's pin. */
export interface ToolPinRecord {
  readonly server: string;
  /** The backend's own tool name. */
  readonly tool: string;
  /** The digest of the definition clients are served. */
  readonly digest: string;
  readonly definition: PinnedDefinition;
  /** Epoch ms: first seen, re-pinned (`warn`) or approved. */
  readonly pinnedAt: number;
  /** Who approved the pinned definition; absent when it was pinned as first seen. */
  readonly pinnedBy?: string;
  readonly pending?: PendingToolChange;
  /** Increases with every change of the record. */
  readonly revision: number;
}

/** A tool definition as seen now. */
export interface SeenTool {
  readonly tool: string;
  readonly digest: string;
  readonly definition: PinnedDefinition;
}

/** The pins of every server, shared by the replicas. */
export interface ToolPinStore {
  /** The pins of `servers` (every server when absent). */
  list(servers?: readonly string[]): Promise<ToolPinRecord[]>;
  /** The pins of every server that have a pending (held or rejected) change. */
  listPending(): Promise<ToolPinRecord[]>;
  /** Pins tools seen for the first time; tools already pinned are left as they are. */
  pinFirstSeen(server: string, tools: readonly SeenTool[], now: number): Promise<void>;
  /**
   * Records `seen` as the pending change of a tool pinned with another digest, unless it already
   * is. True when this call recorded it.
   */
  hold(server: string, seen: SeenTool, now: number): Promise<boolean>;
  /**
   * Moves the pin of a tool from `fromDigest` to `seen` (mode `warn`), dropping any pending
   * change. True when this call moved it.
   */
  repin(server: string, fromDigest: string, seen: SeenTool, now: number): Promise<boolean>;
  /** Drops the pending change of a tool whose backend serves the pinned definition again. */
  clearPending(server: string, tool: string, pinnedDigest: string): Promise<void>;
  /** Pins the pending definition `digest` (held or rejected). True when this call did. */
  approve(server: string, tool: string, digest: string, by: string, now: number): Promise<boolean>;
  /** Marks the held definition `digest` rejected. True when this call did. */
  reject(server: string, tool: string, digest: string, by: string): Promise<boolean>;
}
