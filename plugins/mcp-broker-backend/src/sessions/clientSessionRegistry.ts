/*
 * Client sessions as this broker replica sees them.
 *
 * The record of a session — principal, protocol version, client capabilities, expiry — lives in a
 * ClientSessionStore: in memory by default, in the plugin's database when several replicas serve
 * one client population (mcpBroker.sessionStore: database). What cannot be shared stays here, per
 * replica: the session's GET stream, its in-flight requests and the `ended` signal that stops
 * them. A replica that did not create a session materialises its local half on the first request.
 *
 * A session id is 256 random bits (base64url) and is bound to the principal that initialized it:
 * looking it up with another principal's credentials behaves exactly like an unknown id, so ids
 * cannot be probed across users.
 *
 * Expiry is a sliding TTL (mcpBroker.sessionIdleTimeout) kept in the store: a request extends it
 * (at most one write per refresh interval), and the sweep extends it for sessions that hold a GET
 * stream or a running request here. The sweep also ends the local half of every session whose
 * record is gone — ended through another replica, or expired — so a DELETE on one replica reaches
 * the others within one sweep interval. Shutting a replica down ends only its local halves.
 */
import { randomBytes } from 'node:crypto';
import type { ClientEventStream, ClientSessionInfo } from '../broker/types';
import { ClientSessionStore, MemoryClientSessionStore } from './clientSessionStore';

/** A client session with this replica's live parts. */
export interface ClientSession extends ClientSessionInfo {
  /** Last request or stream activity on this replica (ms since epoch). */
  lastActiveAt: number;
  /** Requests of this session running on this replica (they keep the session alive). */
  openRequests: number;
  /** The session's GET stream on this replica, while one is open (at most one). */
  eventStream?: ClientEventStream;
  /** Aborted when the session ends (DELETE, expiry, shutdown of this replica). */
  readonly ended: AbortController;
}

/** Options of {@link ClientSessionRegistry}. */
export interface ClientSessionRegistryOptions {
  /** Where session records live; default: in this process's memory. */
  store?: ClientSessionStore;
  /** Sliding lifetime of an unused session (mcpBroker.sessionIdleTimeout). */
  ttlMs: number;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
  /**
   * Called once when a session's local half ends because the session ended (DELETE here or on
   * another replica, expiry): release its calls, backend sessions and elicitation ids here.
   */
  onEnded?: (id: string) => Promise<void>;
}

/** Bytes of randomness in a session id (≥ 128 bits required; 256 used). */
const SESSION_ID_BYTES = 32;
/** Longest time between two expiry extensions of one session (writes are rate-limited by it). */
const MAX_REFRESH_INTERVAL_MS = 60_000;

/** Client sessions of this replica over a (possibly shared) store; see the file comment. */
export class ClientSessionRegistry {
  private readonly local = new Map<string, ClientSession>();
  private readonly store: ClientSessionStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onEnded: ((id: string) => Promise<void>) | undefined;

  constructor(options: ClientSessionRegistryOptions) {
    this.store = options.store ?? new MemoryClientSessionStore();
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
    this.onEnded = options.onEnded;
  }

  /** How often {@link ClientSessionRegistry.sweep} should run. */
  get sweepIntervalMs(): number {
    return this.refreshIntervalMs;
  }

  private get refreshIntervalMs(): number {
    return Math.max(250, Math.min(MAX_REFRESH_INTERVAL_MS, this.ttlMs / 4));
  }

  /** Creates and records a session for `init.principal`. */
  async create(init: Omit<ClientSessionInfo, 'id'>): Promise<ClientSession> {
    const now = this.now();
    const id = randomBytes(SESSION_ID_BYTES).toString('base64url');
    await this.store.insert({ ...init, id, expiresAt: now + this.ttlMs });
    return this.materialise({ ...init, id }, now);
  }

  /**
   * The session with this id if it exists (on any replica), has not expired and belongs to
   * `principal`; otherwise undefined.
   */
  async get(id: string, principal: string): Promise<ClientSession | undefined> {
    const now = this.now();
    const record = await this.store.get(id, now);
    if (!record) {
      await this.endLocal(id);
      return undefined;
    }
    if (record.principal !== principal) return undefined;
    const session = this.local.get(id) ?? this.materialise(record, now);
    session.lastActiveAt = now;
    if (record.expiresAt - now < this.ttlMs - this.refreshIntervalMs) {
      await this.store.extend([id], now + this.ttlMs, now);
    }
    return session;
  }

  /** Ends a session everywhere: removes its record and ends its local half here. */
  async end(id: string): Promise<void> {
    await this.store.delete(id);
    await this.endLocal(id);
  }

  /**
   * Keeps sessions in use here alive in the store, ends the local half of sessions whose record
   * is gone, and removes expired records. Returns the ids whose local half ended.
   */
  async sweep(): Promise<string[]> {
    const now = this.now();
    const ids = [...this.local.keys()];
    const inUse = [...this.local.values()]
      .filter(s => s.openRequests > 0 || (s.eventStream !== undefined && !s.eventStream.closed))
      .map(s => s.id);
    if (inUse.length > 0) {
      await this.store.extend(inUse, now + this.ttlMs, now);
    }
    const live = await this.store.liveIds(ids, now);
    const ended = ids.filter(id => !live.has(id));
    await Promise.all(ended.map(id => this.endLocal(id)));
    await this.store.deleteExpired(now);
    return ended;
  }

  /**
   * Ends every local half without `onEnded` (this replica shuts down and closes its calls and
   * backend sessions itself); the records stay for the other replicas.
   */
  closeLocal(): void {
    for (const session of [...this.local.values()]) this.dropLocal(session);
  }

  /** Every GET stream open on this replica at this moment. */
  openEventStreams(): ClientEventStream[] {
    const streams: ClientEventStream[] = [];
    for (const session of this.local.values()) {
      if (session.eventStream && !session.eventStream.closed) streams.push(session.eventStream);
    }
    return streams;
  }

  /** Ids of the sessions with a local half on this replica. */
  ids(): string[] {
    return [...this.local.keys()];
  }

  /** Number of sessions with a local half on this replica. */
  get size(): number {
    return this.local.size;
  }

  private materialise(info: ClientSessionInfo, now: number): ClientSession {
    const session: ClientSession = {
      id: info.id,
      principal: info.principal,
      protocolVersion: info.protocolVersion,
      clientCapabilities: info.clientCapabilities,
      clientInfo: info.clientInfo,
      lastActiveAt: now,
      openRequests: 0,
      ended: new AbortController(),
    };
    this.local.set(session.id, session);
    return session;
  }

  /** Ends the local half of a session that ended, and lets the owner release what it held. */
  private async endLocal(id: string): Promise<void> {
    const session = this.local.get(id);
    if (!session) return;
    this.dropLocal(session);
    await this.onEnded?.(id);
  }

  private dropLocal(session: ClientSession): void {
    this.local.delete(session.id);
    session.eventStream?.close();
    session.ended.abort();
  }
}
