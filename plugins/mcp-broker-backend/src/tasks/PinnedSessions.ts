/*
 * The pinned backend sessions of 2025-11-25 tasks on this replica (docs/contracts/tasks-and-apps.md
 * §2.11): LegacyTaskRelay opens its own sessions, one per server identity, person and declared
 * client capabilities — a session declares the relayable capabilities of the client that creates
 * a task on it —, apart from the clients' session pools, so ending a client session or this
 * replica never DELETEs one. Cached here: a session that fails to open is dropped at once, a
 * forgotten one (replacePinnedSession.ts) is dropped so that its replacement is opened, a removed
 * or replaced server's go with it, and the sweep of expired rows DELETEs each session whose last
 * row it deleted (best effort: a backend that is gone expires the session itself).
 */
import type { BrokerServerConfig } from '../config';
import type { LegacyChannel, LegacySession } from '../backend/LegacyChannel';
import type { RelayedClientCapabilities } from '../protocol/capabilities';
import { serverIdentityOf } from '../identity/serverIdentity';
import { LATEST_PROTOCOL_VERSION } from '../protocol/versions';
import type { UnpinnedBackendSession } from './TaskStore';

/** A backend as its pinned sessions reach it (a LegacyTaskRelay `TaskBackend` is one). */
export interface PinnedSessionBackend {
  readonly server: BrokerServerConfig;
  readonly channel: Pick<LegacyChannel, 'open' | 'endSession'>;
}

/** See the file comment. */
export class PinnedSessions {
  /** This replica's pinned task sessions, by server identity, person and declared capabilities. */
  private readonly sessions = new Map<string, Promise<LegacySession>>();

  /** `backendOf`: the live backend of a server name (servers come and go at runtime). */
  constructor(private readonly backendOf: (server: string) => PinnedSessionBackend | undefined) {}

  /**
   * The pinned session of `principal` at `backend` declaring `capabilities` on this replica
   * (opened on first use): the backend asks a task's creator only what its client can answer.
   */
  sessionOf(
    backend: PinnedSessionBackend,
    principal: string,
    capabilities: RelayedClientCapabilities,
  ): Promise<LegacySession> {
    const key = pinnedSessionKey(backend, principal, capabilities);
    let session = this.sessions.get(key);
    if (session === undefined) {
      session = backend.channel.open({ ...capabilities });
      this.sessions.set(key, session);
      session.catch(() => {
        if (this.sessions.get(key) === session) this.sessions.delete(key);
      });
    }
    return session;
  }

  /** Drops the cached pinned session under `key` if it is still `session`. */
  async forgetSession(key: string, session: Pick<LegacySession, 'id'>) {
    const cached = this.sessions.get(key);
    const current = await cached?.catch(() => undefined);
    if (current?.id === session.id && this.sessions.get(key) === cached) this.sessions.delete(key);
  }

  /**
   * Ends each pinned backend session the sweep of expired rows deleted the last row of (contract
   * §2.11, best effort), when its server is still configured with the same identity.
   */
  async endUnpinned(unpinned: readonly UnpinnedBackendSession[]): Promise<void> {
    await Promise.all(
      unpinned.map(async ({ server, serverIdentity, backendSessionId }) => {
        const backend = this.backendOf(server);
        if (backend === undefined || serverIdentityOf(backend.server) !== serverIdentity) return;
        // This replica's own task calls must not use the session any more.
        for (const [key, cached] of this.sessions) {
          if ((await cached.catch(() => undefined))?.id === backendSessionId) {
            if (this.sessions.get(key) === cached) this.sessions.delete(key);
          }
        }
        await backend.channel.endSession({
          id: backendSessionId,
          protocolVersion: LATEST_PROTOCOL_VERSION,
        });
      }),
    );
  }

  /** Drops this replica's pinned sessions at `server` (removed, or replaced under its name). */
  forgetServer(server: BrokerServerConfig): void {
    const identity = serverIdentityOf(server);
    for (const key of [...this.sessions.keys()]) {
      if (key.startsWith(`${identity}\u0000`)) this.sessions.delete(key);
    }
  }
}

/**
 * The key of a person's pinned session at a server (its identity: a new server gets new ones)
 * declaring `capabilities` (their members in a fixed order).
 */
export function pinnedSessionKey(
  backend: Pick<PinnedSessionBackend, 'server'>,
  principal: string,
  capabilities: RelayedClientCapabilities,
): string {
  const declared = JSON.stringify(
    (['elicitation', 'sampling', 'roots', 'extensions'] as const).map(name => capabilities[name]),
  );
  return `${serverIdentityOf(backend.server)}\u0000${principal}\u0000${declared}`;
}
