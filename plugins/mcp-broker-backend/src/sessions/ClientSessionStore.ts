/*
 * Where client sessions are recorded, so that every broker replica recognises them (spec §6).
 *
 * A record holds what any replica needs to serve the session: its principal (the session is
 * bound to it), the negotiated protocol version, the client's declared capabilities and
 * `clientInfo`, and an expiry. Live resources — the GET stream, in-flight calls, backend
 * sessions — are never stored: each replica keeps its own (see ClientSessionRegistry).
 *
 * Expiry is a sliding TTL: replicas extend it while the session is used or holds a stream, and
 * `get` never returns an expired record, whether or not the sweep has removed it yet.
 *
 * A session has at most one GET stream across all replicas: the replica that opens one takes the
 * session's stream lease (a holder token and an expiry), renews it while the stream is open, and
 * releases it when the stream ends. A replica that crashes stops renewing, so its lease lapses
 * and the session can open a stream elsewhere.
 */

/** A client session as every replica sees it. */
export interface StoredClientSession {
  readonly id: string;
  /** `user:<entity ref>` or `service:<subject>`; requests of anyone else never see the session. */
  readonly principal: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  readonly clientInfo?: Readonly<Record<string, unknown>>;
  /** The curated endpoint the session belongs to (absent: the main endpoint). */
  readonly endpoint?: string;
  /** Epoch milliseconds after which the session is gone. */
  readonly expiresAt: number;
}

/** Storage of {@link StoredClientSession}s (in memory, or shared by every replica). */
export interface ClientSessionStore {
  insert(session: StoredClientSession): Promise<void>;
  /**
   * Inserts `session` unless its principal already has `max` unexpired sessions at `now`; true
   * when inserted. Atomic across replicas: of concurrent inserts for one principal, on any
   * replica, never more than `max` sessions result.
   */
  insertWithinLimit(session: StoredClientSession, max: number, now: number): Promise<boolean>;
  /** The session if it exists and has not expired at `now`. */
  get(id: string, now: number): Promise<StoredClientSession | undefined>;
  /** Moves the expiry of these sessions, where unexpired, to `expiresAt` (never backwards). */
  extend(ids: readonly string[], expiresAt: number, now: number): Promise<void>;
  /** How many unexpired sessions `principal` has at `now` (for the per-principal limit). */
  countLive(principal: string, now: number): Promise<number>;
  /** Which of these sessions exist and have not expired at `now` (one query for a sweep). */
  liveIds(ids: readonly string[], now: number): Promise<Set<string>>;
  /**
   * Takes the stream lease of a live session for `holder` until `leaseExpiresAt`, unless another
   * holder's lease is still valid at `now` and the replica holding it is present
   * (replicas/ReplicaPresence.ts). True when taken. Atomic across replicas.
   */
  acquireStreamLease(
    id: string,
    holder: string,
    leaseExpiresAt: number,
    now: number,
  ): Promise<boolean>;
  /**
   * Moves the expiry of the leases these holders still hold to `leaseExpiresAt`; resolves with
   * the holders that no longer hold theirs (taken over while this replica counted as gone).
   */
  renewStreamLeases(holders: readonly string[], leaseExpiresAt: number): Promise<string[]>;
  /** Gives the lease up, if `holder` still holds it. */
  releaseStreamLease(id: string, holder: string): Promise<void>;
  /** Removes a session; true when it existed. */
  delete(id: string): Promise<boolean>;
  /** Removes every session expired at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}

/** The single-process {@link ClientSessionStore} (the default). */
export class MemoryClientSessionStore implements ClientSessionStore {
  private readonly sessions = new Map<string, StoredClientSession>();
  private readonly leases = new Map<string, { holder: string; expiresAt: number }>();

  async insert(session: StoredClientSession): Promise<void> {
    this.sessions.set(session.id, session);
  }

  async insertWithinLimit(session: StoredClientSession, max: number, now: number) {
    // One synchronous step: nothing can come between the count and the insert.
    if (this.countLiveNow(session.principal, now) >= max) return false;
    this.sessions.set(session.id, session);
    return true;
  }

  async get(id: string, now: number) {
    const session = this.sessions.get(id);
    return session && session.expiresAt > now ? session : undefined;
  }

  async extend(ids: readonly string[], expiresAt: number, now: number) {
    for (const id of ids) {
      const session = this.sessions.get(id);
      if (session && session.expiresAt > now && session.expiresAt < expiresAt) {
        this.sessions.set(id, { ...session, expiresAt });
      }
    }
  }

  async countLive(principal: string, now: number) {
    return this.countLiveNow(principal, now);
  }

  private countLiveNow(principal: string, now: number): number {
    let count = 0;
    for (const session of this.sessions.values()) {
      if (session.principal === principal && session.expiresAt > now) count += 1;
    }
    return count;
  }

  async liveIds(ids: readonly string[], now: number) {
    return new Set(ids.filter(id => (this.sessions.get(id)?.expiresAt ?? 0) > now));
  }

  async acquireStreamLease(id: string, holder: string, leaseExpiresAt: number, now: number) {
    if ((this.sessions.get(id)?.expiresAt ?? 0) <= now) return false;
    const lease = this.leases.get(id);
    if (lease !== undefined && lease.expiresAt > now) return false;
    this.leases.set(id, { holder, expiresAt: leaseExpiresAt });
    return true;
  }

  async renewStreamLeases(holders: readonly string[], leaseExpiresAt: number) {
    const lost = new Set(holders);
    for (const lease of this.leases.values()) {
      if (lost.delete(lease.holder)) lease.expiresAt = leaseExpiresAt;
    }
    return [...lost];
  }

  async releaseStreamLease(id: string, holder: string) {
    if (this.leases.get(id)?.holder === holder) this.leases.delete(id);
  }

  async delete(id: string) {
    this.leases.delete(id);
    return this.sessions.delete(id);
  }

  async deleteExpired(now: number) {
    let removed = 0;
    for (const [id, session] of this.sessions) {
      if (session.expiresAt <= now) {
        this.sessions.delete(id);
        this.leases.delete(id);
        removed += 1;
      }
    }
    return removed;
  }
}
