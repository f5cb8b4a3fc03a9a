/*
 * Client sessions of this broker replica. A session id is 256 random bits (base64url) and is
 * bound to the principal that initialized it: looking it up with another principal's
 * credentials behaves exactly like an unknown id, so ids cannot be probed across users.
 */
import { randomBytes } from 'node:crypto';
import type { ClientEventStream, ClientSessionInfo } from '../broker/types';

/** A live client session. */
export interface ClientSession extends ClientSessionInfo {
  /** Last request or stream activity (ms since epoch); idle sessions are ended. */
  lastActiveAt: number;
  /** The session's GET stream, while one is open (at most one). */
  eventStream?: ClientEventStream;
  /** Aborted when the session ends (DELETE, idle expiry, shutdown). */
  readonly ended: AbortController;
}

/** Bytes of randomness in a session id (≥ 128 bits required; 256 used). */
const SESSION_ID_BYTES = 32;

/** In-memory registry of client sessions. */
export class ClientSessionRegistry {
  private readonly sessions = new Map<string, ClientSession>();

  /** Creates a session for `principal`. */
  create(init: Omit<ClientSessionInfo, 'id'>): ClientSession {
    const session: ClientSession = {
      ...init,
      id: randomBytes(SESSION_ID_BYTES).toString('base64url'),
      lastActiveAt: Date.now(),
      ended: new AbortController(),
    };
    this.sessions.set(session.id, session);
    return session;
  }

  /** The session with this id if it belongs to `principal`; otherwise undefined. */
  get(id: string, principal: string): ClientSession | undefined {
    const session = this.sessions.get(id);
    if (!session || session.principal !== principal) return undefined;
    session.lastActiveAt = Date.now();
    return session;
  }

  /** Removes and ends a session; undefined if there was none. */
  end(id: string): ClientSession | undefined {
    const session = this.sessions.get(id);
    if (!session) return undefined;
    this.sessions.delete(id);
    session.eventStream?.close();
    session.ended.abort();
    return session;
  }

  /** Ends sessions idle for longer than `idleMs` that have no open stream; returns their ids. */
  endIdle(idleMs: number, now = Date.now()): string[] {
    const ended: string[] = [];
    for (const session of [...this.sessions.values()]) {
      const streaming = session.eventStream !== undefined && !session.eventStream.closed;
      if (!streaming && now - session.lastActiveAt > idleMs) {
        this.end(session.id);
        ended.push(session.id);
      }
    }
    return ended;
  }

  /** Every GET stream open at this moment. */
  openEventStreams(): ClientEventStream[] {
    const streams: ClientEventStream[] = [];
    for (const session of this.sessions.values()) {
      if (session.eventStream && !session.eventStream.closed) streams.push(session.eventStream);
    }
    return streams;
  }

  /** Ids of all sessions. */
  ids(): string[] {
    return [...this.sessions.keys()];
  }

  get size(): number {
    return this.sessions.size;
  }
}
