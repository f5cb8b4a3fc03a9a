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
 */

/** A client session as every replica sees it. */
export interface StoredClientSession {
  readonly id: string;
  /** `user:<entity ref>` or `service:<subject>`; requests of anyone else never see the session. */
  readonly principal: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: Readonly<Record<string, unknown>>;
  readonly clientInfo?: Readonly<Record<string, unknown>>;
  /** Epoch milliseconds after which the session is gone. */
  readonly expiresAt: number;
}

/** Storage of {@link StoredClientSession}s (in memory, or shared by every replica). */
export interface ClientSessionStore {
  insert(session: StoredClientSession): Promise<void>;
  /** The session if it exists and has not expired at `now`. */
  get(id: string, now: number): Promise<StoredClientSession | undefined>;
  /** Moves the expiry of these sessions, where unexpired, to `expiresAt` (never backwards). */
  extend(ids: readonly string[], expiresAt: number, now: number): Promise<void>;
  /** How many unexpired sessions `principal` has at `now` (for the per-principal limit). */
  countLive(principal: string, now: number): Promise<number>;
  /** Which of these sessions exist and have not expired at `now` (one query for a sweep). */
  liveIds(ids: readonly string[], now: number): Promise<Set<string>>;
  /** Removes a session; true when it existed. */
  delete(id: string): Promise<boolean>;
  /** Removes every session expired at `now`; returns how many. */
  deleteExpired(now: number): Promise<number>;
}

/** The single-process {@link ClientSessionStore} (the default). */
export class MemoryClientSessionStore implements ClientSessionStore {
  private readonly sessions = new Map<string, StoredClientSession>();

  async insert(session: StoredClientSession): Promise<void> {
    this.sessions.set(session.id, session);
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
    let count = 0;
    for (const session of this.sessions.values()) {
      if (session.principal === principal && session.expiresAt > now) count += 1;
    }
    return count;
  }

  async liveIds(ids: readonly string[], now: number) {
    return new Set(ids.filter(id => (this.sessions.get(id)?.expiresAt ?? 0) > now));
  }

  async delete(id: string) {
    return this.sessions.delete(id);
  }

  async deleteExpired(now: number) {
    let removed = 0;
    for (const [id, session] of this.sessions) {
      if (session.expiresAt <= now) {
        this.sessions.delete(id);
        removed += 1;
      }
    }
    return removed;
  }
}
