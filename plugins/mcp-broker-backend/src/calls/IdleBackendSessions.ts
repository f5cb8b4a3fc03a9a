/*
 * Backend sessions held for stateless (2026-07-28) callers, keyed by `ModernCaller.poolKey`.
 *
 * A session-era client ends its backend sessions with its own session (DELETE, idle expiry); a
 * stateless client never says goodbye. So the pool sessions of a pool key are closed once no call
 * of that key has run for `idleMs`. Guarantees: a key with a call in flight is never closed; a
 * call that begins after a close gets a fresh session (the pool forgets the key synchronously).
 * Backend removal and shutdown close these sessions with the backend's channel, as every other.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';

/** Idle time after which the backend sessions of a stateless caller are closed. */
export const DEFAULT_STATELESS_BACKEND_SESSION_IDLE_MS = 5 * 60_000;

/** Longest interval between two sweeps for idle keys. */
const MAX_SWEEP_INTERVAL_MS = 60_000;

interface KeyUse {
  active: number;
  lastUsedAt: number;
}

/** Closes the pooled backend sessions of stateless callers after they were idle for a while. */
export class IdleBackendSessions {
  private readonly uses = new Map<string, KeyUse>();
  private sweeper?: NodeJS.Timeout;

  constructor(
    /** Ends the backend sessions held for a key (with every backend). */
    private readonly closeSessionsOf: (key: string) => Promise<void>,
    private readonly options: { idleMs: number; logger: LoggerService },
  ) {}

  /** Starts the periodic sweep (unref'ed: it never keeps the process alive). */
  start(): void {
    if (this.sweeper !== undefined) return;
    const interval = Math.min(this.options.idleMs, MAX_SWEEP_INTERVAL_MS);
    this.sweeper = setInterval(() => void this.sweep(), interval);
    this.sweeper.unref();
  }

  /** Marks a call of `key` as running; call the returned function when it ends. */
  begin(key: string): () => void {
    const use = this.uses.get(key) ?? { active: 0, lastUsedAt: Date.now() };
    use.active += 1;
    this.uses.set(key, use);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      use.active -= 1;
      use.lastUsedAt = Date.now();
    };
  }

  /** Number of keys with backend sessions that may still be open (tests, status). */
  size(): number {
    return this.uses.size;
  }

  /** Closes the sessions of every key idle for `idleMs` at `now`. */
  async sweep(now: number = Date.now()): Promise<void> {
    const idle: string[] = [];
    for (const [key, use] of this.uses) {
      if (use.active === 0 && now - use.lastUsedAt >= this.options.idleMs) {
        this.uses.delete(key);
        idle.push(key);
      }
    }
    await Promise.all(
      idle.map(key =>
        this.closeSessionsOf(key).catch(error =>
          this.options.logger.debug(`Could not close idle backend sessions: ${error}`),
        ),
      ),
    );
  }

  /** Stops sweeping (shutdown; the pool closes the sessions themselves). */
  stop(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.uses.clear();
  }
}
