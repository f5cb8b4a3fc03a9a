/*
 * Each replica's presence among the replicas sharing the plugin's database (spec §6, issue #41).
 * A replica marks itself alive every PRESENCE_BEAT_MS for PRESENCE_TTL_MS; a replica whose mark
 * lapsed is gone. What a gone replica held — a session's GET stream lease, a held call's round —
 * is then taken over by the others at once, instead of when each hold's own lease runs out (the
 * stores check presence in the same statement that takes a hold over; store/replicaGone.ts).
 * A replica that stops cleanly removes its mark after its calls ended.
 *
 * The rate limits read the same marks to learn how many replicas share a limit.
 *
 * Failure modes: a beat that fails is logged once per failure streak and tried again at the next
 * beat; a replica that cannot beat for PRESENCE_TTL_MS (its database is unreachable, its event
 * loop stalled) counts as gone to the others, which may then take over its GET streams (it
 * closes the streams whose lease it finds taken at its next renewal) and refuse retries of its
 * held calls.
 */
import { randomUUID } from 'node:crypto';
import type { LoggerService } from '@backstage/backend-plugin-api';

/** How often a replica marks itself alive. */
export const PRESENCE_BEAT_MS = 2_000;
/** How long one mark lasts: a replica that missed this long counts as gone. */
export const PRESENCE_TTL_MS = 10_000;

/** Where the replicas' marks are kept (the plugin's database). */
export interface ReplicaPresenceStore {
  /** Marks `replicaId` alive until `aliveUntil` (epoch ms) and drops marks that lapsed by `now`. */
  beat(replicaId: string, aliveUntil: number, now: number): Promise<void>;
  /** Removes the mark of `replicaId` (it stopped cleanly). */
  leave(replicaId: string): Promise<void>;
}

/** Options of {@link ReplicaPresence}. */
export interface ReplicaPresenceOptions {
  store: ReplicaPresenceStore;
  /** This replica's id; default a random UUID. */
  id?: string;
  /** Epoch milliseconds (tests pass their own clock). */
  now?: () => number;
  beatMs?: number;
  ttlMs?: number;
}

/** This replica's presence; see the file comment. */
export class ReplicaPresence {
  /** This replica's id, as the stores record it with what it holds. */
  readonly id: string;
  readonly #store: ReplicaPresenceStore;
  readonly #now: () => number;
  readonly #beatMs: number;
  readonly #ttlMs: number;
  #timer?: NodeJS.Timeout;
  #failing = false;
  #logger?: LoggerService;

  constructor(options: ReplicaPresenceOptions) {
    this.id = options.id ?? randomUUID();
    this.#store = options.store;
    this.#now = options.now ?? Date.now;
    this.#beatMs = options.beatMs ?? PRESENCE_BEAT_MS;
    this.#ttlMs = options.ttlMs ?? PRESENCE_TTL_MS;
  }

  /** Marks this replica alive now and every beat from then on, until {@link stop}. */
  async start(logger: LoggerService): Promise<void> {
    this.#logger = logger;
    await this.beat();
    this.#timer = setInterval(() => void this.beat(), this.#beatMs);
    this.#timer.unref();
  }

  /** One beat; a failure is logged (once per streak), never thrown. */
  async beat(): Promise<void> {
    const now = this.#now();
    try {
      await this.#store.beat(this.id, now + this.#ttlMs, now);
      if (this.#failing) this.#logger?.info('Marking this broker replica alive works again');
      this.#failing = false;
    } catch (error) {
      if (!this.#failing) {
        this.#logger?.warn(
          `Could not mark this broker replica alive (other replicas take over what it holds ` +
            `after ${this.#ttlMs} ms without a mark): ${error}`,
        );
      }
      this.#failing = true;
    }
  }

  /** Stops beating and removes this replica's mark (run after its calls ended). */
  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    try {
      await this.#store.leave(this.id);
    } catch (error) {
      this.#logger?.warn(`Could not remove this broker replica's presence mark: ${error}`);
    }
  }
}
