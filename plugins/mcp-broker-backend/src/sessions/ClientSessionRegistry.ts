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
 *
 * Limits (mcpBroker.sessionLimits): a principal may hold `perPrincipal` sessions (counted in the
 * store, so across replicas) and a replica `perReplica` local halves. At a limit, the oldest idle
 * session makes room — idle meaning no GET stream and no request running. With the memory store
 * this replica sees every use of a session, so the oldest idle one of the principal is ended.
 * With a shared store another replica may be using it unseen, so a principal at its limit is
 * refused; for the replica limit only the local half of an idle session is released (the session
 * goes on and comes back on its next request). When nothing can make room, SessionLimitError.
 *
 * One GET stream per session across replicas: opening one takes the session's stream lease in
 * the store (claimEventStream), the broker renews the leases of open streams every
 * STREAM_LEASE_RENEW_MS, and closing the stream releases it. A crashed replica's lease lapses
 * after STREAM_LEASE_MS — sooner, when the store knows replicas' presence: once the dead replica's
 * presence mark lapsed (PRESENCE_TTL_MS, replicas/ReplicaPresence.ts).
 */
import { randomBytes } from 'node:crypto';
import type { ClientEventStream, ClientSessionInfo } from '../types';
import { ClientSessionStore, MemoryClientSessionStore } from './ClientSessionStore';

/** A client session with this replica's live parts. */
export interface ClientSession extends ClientSessionInfo {
  /** Last request or stream activity on this replica (ms since epoch). */
  lastActiveAt: number;
  /** Requests of this session running on this replica (they keep the session alive). */
  openRequests: number;
  /** The session's GET stream on this replica, while one is open (at most one). */
  eventStream?: ClientEventStream;
  /** Whose view the GET stream carries: the credential of the request that opened it. */
  eventStreamViewer?: string;
  /** Holder token of the session's stream lease, while this replica holds it. */
  streamLease?: string;
  /** Aborted when the session ends (DELETE, expiry, shutdown of this replica). */
  readonly ended: AbortController;
}

/** Limits on client sessions (mcpBroker.sessionLimits). */
export interface SessionLimits {
  /** Sessions one principal may hold at once (all replicas together). */
  readonly perPrincipal: number;
  /** Sessions one replica serves at once (local halves). */
  readonly perReplica: number;
}

/** A session limit is reached and no idle session could make room. The message names the limit. */
export class SessionLimitError extends Error {
  readonly name = 'SessionLimitError';
  constructor(
    readonly limit: keyof SessionLimits,
    readonly max: number,
    principal: string,
  ) {
    super(
      limit === 'perPrincipal'
        ? `Too many MCP sessions for ${principal.slice(0, 200)}: at most ${max} at once ` +
            '(mcpBroker.sessionLimits.perPrincipal). End sessions you no longer use (DELETE) ' +
            'or wait until one idles out'
        : `This MCP broker replica serves its maximum of ${max} sessions ` +
            '(mcpBroker.sessionLimits.perReplica) and none is idle; retry later',
    );
  }
}

/** Options of {@link ClientSessionRegistry}. */
export interface ClientSessionRegistryOptions {
  /** Where session records live; default: in this process's memory. */
  store?: ClientSessionStore;
  /** Sliding lifetime of an unused session (mcpBroker.sessionIdleTimeout). */
  ttlMs: number;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
  /** Default: no limits. */
  limits?: SessionLimits;
  /** True when `store` is shared by several replicas (changes what may be evicted; see above). */
  sharedStore?: boolean;
  /**
   * Called when the local half of a session is released to make room (shared store only): the
   * session goes on, but what this replica holds for it (backend sessions) should be closed.
   */
  onReleased?: (id: string) => Promise<void>;
  /**
   * Called once when a session's local half ends because the session ended (DELETE here or on
   * another replica, expiry): release its calls, backend sessions and elicitation ids here.
   */
  onEnded?: (id: string) => Promise<void>;
}

/** Bytes of randomness in a session id (≥ 128 bits required; 256 used). */
const SESSION_ID_BYTES = 32;
/** Lifetime of an unrenewed stream lease (a crashed replica blocks a GET at most this long). */
export const STREAM_LEASE_MS = 30_000;

/** How often the leases of open GET streams are renewed. */
export const STREAM_LEASE_RENEW_MS = 10_000;

/** Longest time between two expiry extensions of one session (writes are rate-limited by it). */
const MAX_REFRESH_INTERVAL_MS = 60_000;

/** Client sessions of this replica over a (possibly shared) store; see the file comment. */
export class ClientSessionRegistry {
  private readonly local = new Map<string, ClientSession>();
  private readonly store: ClientSessionStore;
  private readonly ttlMs: number;
  private readonly now: () => number;
  private readonly onEnded: ((id: string) => Promise<void>) | undefined;
  private readonly onReleased: ((id: string) => Promise<void>) | undefined;
  private readonly limits: SessionLimits;
  private readonly sharedStore: boolean;
  /** Sessions being created here, by principal (counted against the limits before they exist). */
  private readonly creating = new Map<string, number>();
  /** Who waits for a local session to have no running request ({@link whenIdle}). */
  private readonly idleWaiters = new Map<string, Array<() => void>>();

  constructor(options: ClientSessionRegistryOptions) {
    this.store = options.store ?? new MemoryClientSessionStore();
    this.ttlMs = options.ttlMs;
    this.now = options.now ?? Date.now;
    this.onEnded = options.onEnded;
    this.onReleased = options.onReleased;
    this.limits = options.limits ?? { perPrincipal: Infinity, perReplica: Infinity };
    this.sharedStore = options.sharedStore ?? false;
  }

  /** How often {@link ClientSessionRegistry.sweep} should run. */
  get sweepIntervalMs(): number {
    return this.refreshIntervalMs;
  }

  private get refreshIntervalMs(): number {
    return Math.max(250, Math.min(MAX_REFRESH_INTERVAL_MS, this.ttlMs / 4));
  }

  /**
   * Creates and records a session for `init.principal`, first making room under the limits.
   * Throws SessionLimitError when a limit is reached and no idle session can make room.
   */
  async create(init: Omit<ClientSessionInfo, 'id'>): Promise<ClientSession> {
    const { principal } = init;
    this.creating.set(principal, (this.creating.get(principal) ?? 0) + 1);
    try {
      await this.makeRoomForPrincipal(principal);
      await this.makeRoomOnReplica(principal);
      const now = this.now();
      const id = randomBytes(SESSION_ID_BYTES).toString('base64url');
      // The limit is checked again where the session is written, atomically: replicas racing
      // initialize for one principal each saw room above.
      const max = this.limits.perPrincipal;
      const inserted = await this.store.insertWithinLimit(
        { ...init, id, expiresAt: now + this.ttlMs },
        max,
        now,
      );
      if (!inserted) throw new SessionLimitError('perPrincipal', max, principal);
      return this.materialise({ ...init, id }, now);
    } finally {
      const left = this.creating.get(principal)! - 1;
      if (left === 0) this.creating.delete(principal);
      else this.creating.set(principal, left);
    }
  }

  private async makeRoomForPrincipal(principal: string): Promise<void> {
    const max = this.limits.perPrincipal;
    const othersCreating = this.creating.get(principal)! - 1;
    if ((await this.store.countLive(principal, this.now())) + othersCreating < max) return;
    const idle = this.sharedStore ? undefined : this.oldestIdle(s => s.principal === principal);
    if (idle === undefined) throw new SessionLimitError('perPrincipal', max, principal);
    await this.end(idle.id);
  }

  private async makeRoomOnReplica(principal: string): Promise<void> {
    const max = this.limits.perReplica;
    let creating = 0;
    for (const count of this.creating.values()) creating += count;
    // `creating` counts this session too; a session materialised by `get` is not counted there.
    if (this.local.size + Math.max(0, creating - 1) < max) return;
    const idle = this.oldestIdle(() => true);
    if (idle === undefined) throw new SessionLimitError('perReplica', max, principal);
    if (this.sharedStore) {
      this.dropLocal(idle);
      await this.onReleased?.(idle.id);
    } else {
      await this.end(idle.id);
    }
  }

  /** The least recently active local session without a GET stream or a running request. */
  private oldestIdle(matches: (session: ClientSession) => boolean): ClientSession | undefined {
    let oldest: ClientSession | undefined;
    for (const session of this.local.values()) {
      const streaming = session.eventStream !== undefined && !session.eventStream.closed;
      if (streaming || session.openRequests > 0 || !matches(session)) continue;
      if (oldest === undefined || session.lastActiveAt < oldest.lastActiveAt) oldest = session;
    }
    return oldest;
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
    let session = this.local.get(id);
    if (session === undefined) {
      // A session created on another replica (or released here) takes a place on this one.
      await this.makeRoomOnReplica(principal);
      session = this.local.get(id) ?? this.materialise(record, now);
    }
    session.lastActiveAt = now;
    if (record.expiresAt - now < this.ttlMs - this.refreshIntervalMs) {
      await this.store.extend([id], now + this.ttlMs, now);
    }
    return session;
  }

  /**
   * One of the session's requests started running on this replica: until {@link requestEnded},
   * the session is busy (the sweep keeps it alive in the store, and it never makes room at a
   * limit).
   */
  requestStarted(session: ClientSession): void {
    session.openRequests += 1;
  }

  /** The request counted by {@link requestStarted} ended (once per start). */
  requestEnded(session: ClientSession): void {
    session.openRequests -= 1;
    if (session.openRequests === 0) this.wakeIdleWaiters(session.id);
  }

  /**
   * Resolves once the local session `id` runs no request on this replica (at once when it runs
   * none, has no local half, or when its local half ends meanwhile): so a session can be ended
   * without cutting off calls in flight.
   */
  whenIdle(id: string): Promise<void> {
    const session = this.local.get(id);
    if (session === undefined || session.openRequests === 0) return Promise.resolve();
    return new Promise(resolve => {
      this.idleWaiters.set(id, [...(this.idleWaiters.get(id) ?? []), resolve]);
    });
  }

  private wakeIdleWaiters(id: string): void {
    const waiters = this.idleWaiters.get(id);
    this.idleWaiters.delete(id);
    for (const wake of waiters ?? []) wake();
  }

  /**
   * Gives the session the GET stream that `open` opens, at most one per session across replicas
   * (the stream lease in the store). Resolves `'already-open'` without calling `open` when the
   * session has a stream here or elsewhere; rejects when the store fails (nothing opened). The
   * lease is released when the stream closes; a failed release goes to `onReleaseError` (the
   * lease then lapses after STREAM_LEASE_MS). `viewer` is the opening request's credential: the
   * stream hears only of list changes that can concern it.
   */
  async attachEventStream(
    session: ClientSession,
    open: () => ClientEventStream,
    onReleaseError: (error: unknown) => void,
    viewer?: string,
  ): Promise<ClientEventStream | 'already-open'> {
    if (session.eventStream && !session.eventStream.closed) return 'already-open';
    if (!(await this.claimEventStream(session))) return 'already-open';
    const stream = open();
    session.eventStream = stream;
    session.eventStreamViewer = viewer;
    stream.signal.addEventListener('abort', () => {
      session.lastActiveAt = this.now();
      if (session.eventStream === stream) session.eventStream = undefined;
      this.releaseEventStream(session).catch(onReleaseError);
    });
    return stream;
  }

  /**
   * Takes the session's stream lease for a GET stream opened here. False when a stream of the
   * session is open elsewhere (another replica, or a concurrent GET here).
   */
  async claimEventStream(session: ClientSession): Promise<boolean> {
    const holder = randomBytes(16).toString('base64url');
    const now = this.now();
    const leaseExpiresAt = now + STREAM_LEASE_MS;
    const taken = await this.store.acquireStreamLease(session.id, holder, leaseExpiresAt, now);
    if (!taken) return false;
    session.streamLease = holder;
    return true;
  }

  /** Gives up the session's stream lease (its GET stream here ended). */
  async releaseEventStream(session: ClientSession): Promise<void> {
    const holder = session.streamLease;
    if (holder === undefined) return;
    session.streamLease = undefined;
    await this.store.releaseStreamLease(session.id, holder);
  }

  /**
   * Renews the stream leases of every GET stream open here (every STREAM_LEASE_RENEW_MS), and
   * closes the streams whose lease another replica took over meanwhile (this replica counted as
   * gone, replicas/ReplicaPresence.ts): the session's one stream is the other replica's now.
   */
  async renewEventStreams(): Promise<void> {
    const open = new Map<string, ClientSession>();
    for (const session of this.local.values()) {
      const streaming = session.eventStream !== undefined && !session.eventStream.closed;
      if (streaming && session.streamLease !== undefined) open.set(session.streamLease, session);
    }
    if (open.size === 0) return;
    const lost = await this.store.renewStreamLeases([...open.keys()], this.now() + STREAM_LEASE_MS);
    for (const holder of lost) {
      const session = open.get(holder);
      if (session === undefined || session.streamLease !== holder) continue;
      session.streamLease = undefined; // nothing to give up: it is another replica's lease now
      session.eventStream?.close();
    }
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
  /**
   * Ends every GET stream open on this replica, each after giving up its stream lease, so that
   * its client's next GET (on another replica) is accepted at once rather than after
   * STREAM_LEASE_MS. Run when the broker begins to drain. A failed release is passed to
   * `onReleaseError` (the lease then lapses); the stream ends all the same.
   */
  async endEventStreams(onReleaseError: (error: unknown) => void): Promise<void> {
    await Promise.all(
      [...this.local.values()].map(async session => {
        const stream = session.eventStream;
        if (stream === undefined || stream.closed) return;
        await this.releaseEventStream(session).catch(onReleaseError);
        stream.close();
      }),
    );
  }

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

  /** The session's GET stream when it is open on this replica, else undefined. */
  localEventStream(id: string): ClientEventStream | undefined {
    const stream = this.local.get(id)?.eventStream;
    return stream === undefined || stream.closed ? undefined : stream;
  }

  /** Every GET stream open on this replica, with whose view it carries. */
  viewedEventStreams(): Array<{ stream: ClientEventStream; viewer?: string }> {
    const streams: Array<{ stream: ClientEventStream; viewer?: string }> = [];
    for (const session of this.local.values()) {
      if (session.eventStream && !session.eventStream.closed) {
        streams.push({ stream: session.eventStream, viewer: session.eventStreamViewer });
      }
    }
    return streams;
  }

  /** Ids of the sessions with a local half on this replica. */
  ids(): string[] {
    return [...this.local.keys()];
  }

  /** Ids of the sessions of curated endpoint `endpoint` with a local half on this replica. */
  idsOfEndpoint(endpoint: string): string[] {
    const ids: string[] = [];
    for (const session of this.local.values()) {
      if (session.endpoint === endpoint) ids.push(session.id);
    }
    return ids;
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
      ...(info.endpoint === undefined ? {} : { endpoint: info.endpoint }),
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
    this.wakeIdleWaiters(session.id);
  }
}
