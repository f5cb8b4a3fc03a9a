/*
 * The one bus between broker replicas (spec §6: no sticky sessions). What one replica has to
 * tell another about a call travels as a signal through one table of the shared database:
 *
 *   - `cancel`: a client cancelled a call, or went away from the replica serving its retry;
 *   - `answer`: a 2025 client's answer to an input a 2026-07-28 backend asked for;
 *   - `message`: what a held call yields, for the replica serving the client's retry;
 *   - `end`: a relayed leg ended, or a session was ended (DELETE) on another replica.
 *
 * A signal is addressed to whoever waits for it: a call (`call:<call id>`), the relay of one
 * round of a held call on the replica that claimed it (`relay:<call id>:<round>`), or a client
 * session (`session:<id>`: the cancellations and the end of a session's calls, whose ids the
 * sending replica cannot know). Each replica runs ONE poller, and only while something on it
 * waits: one batched query per interval for every waiting address (the shortest interval any
 * waiter asked for), nothing per call; the signals a waiter consumed are deleted in one more
 * statement. Signals expire (`expiresAt`) and are swept with the replicas' other expiring rows.
 *
 * Guarantees: signals of one address reach its waiter in the order they were sent (the table's
 * sequence); a consumed signal is handled once (a waiter that does not consume a signal, such
 * as a session's end that every replica must see, leaves it for the others until it expires);
 * a signal sent before its waiter began to wait (the two requests raced) still reaches it while
 * unexpired. Failure modes: a failed poll is logged once until polls succeed again and delivers
 * nothing; a failed delete is logged (the signal is seen again at the next poll, and handling it
 * twice must be harmless: ending a call is).
 */
import type { LoggerService } from '@backstage/backend-plugin-api';

/** What a signal says; see the file comment. */
export type SignalKind = 'cancel' | 'answer' | 'message' | 'end';

/** A signal to send. */
export interface OutgoingSignal {
  readonly address: string;
  readonly kind: SignalKind;
  /** What it carries (JSON text, or a reason), if anything. */
  readonly payload?: string;
}

/** A signal as read from the table. */
export interface Signal extends OutgoingSignal {
  /** Its place in the order of the table (per address: the order it was sent in). */
  readonly seq: number;
}

/** The table of signals, shared by every replica (the plugin's database). */
export interface SignalStore {
  /** Records a signal until `expiresAt` (epoch ms). */
  send(signal: OutgoingSignal, expiresAt: number): Promise<void>;
  /**
   * Records a signal unless its address already holds `max` unexpired signals at `now`, also
   * when senders on several replicas race (the bound is exact). False when it was not.
   */
  sendBounded(
    signal: OutgoingSignal,
    expiresAt: number,
    max: number,
    now: number,
  ): Promise<boolean>;
  /** The unexpired signals of these addresses at `now`, in order. */
  read(addresses: readonly string[], now: number): Promise<Signal[]>;
  /** Deletes these signals (consumed). */
  remove(seqs: readonly number[]): Promise<void>;
  /** Deletes every signal expired at `now`. */
  deleteExpired(now: number): Promise<void>;
}

/** The address of a call's own signals (cancellations, answers). */
export function callAddress(callId: string): string {
  return `call:${callId}`;
}

/** The address of what a held call's round yields for the replica that claimed it. */
export function relayAddress(callId: string, round: number): string {
  return `relay:${callId}:${round}`;
}

/** The address of a client session's signals (its calls' cancellations, its end). */
export function sessionAddress(sessionId: string): string {
  return `session:${sessionId}`;
}

/**
 * Handles one signal for a waiter; returns true when it consumed it (it is then deleted), false
 * to leave it (for another replica, or because it concerns something this waiter does not hold).
 */
export type SignalHandler = (signal: Signal) => boolean;

/** Default poll interval (a cancellation takes effect within about this long). */
export const DEFAULT_SIGNAL_POLL_MS = 250;

/** Options of {@link SignalBus}. */
export interface SignalBusOptions {
  store: SignalStore;
  logger: LoggerService;
  /** Clock, for tests; default `Date.now`. */
  now?: () => number;
}

interface Waiter {
  readonly address: string;
  readonly handler: SignalHandler;
  readonly pollMs: number;
}

/** See the file comment. */
export class SignalBus {
  private readonly waiters = new Set<Waiter>();
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private polling = false;
  private failing = false;
  private stopped = false;

  constructor(private readonly options: SignalBusOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Sends a signal that lives `ttlMs`. Throws when the store fails. */
  send(signal: OutgoingSignal, ttlMs: number): Promise<void> {
    return this.options.store.send(signal, this.now() + ttlMs);
  }

  /**
   * Sends a signal that lives `ttlMs` unless its address already holds `max` (so that no client
   * can make the table grow without bound); false when it was dropped. Throws when the store
   * fails.
   */
  sendBounded(signal: OutgoingSignal, ttlMs: number, max: number): Promise<boolean> {
    const now = this.now();
    return this.options.store.sendBounded(signal, now + ttlMs, max, now);
  }

  /**
   * Waits for the signals of `address`, read at least every `pollMs`, until the returned
   * function is called. The poller runs only while something waits.
   */
  watch(address: string, handler: SignalHandler, pollMs = DEFAULT_SIGNAL_POLL_MS): () => void {
    const waiter: Waiter = { address, handler, pollMs };
    this.waiters.add(waiter);
    if (this.timer !== undefined && pollMs < this.intervalMs) {
      // A waiter in a hurry: the next poll comes sooner.
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
    return () => {
      this.waiters.delete(waiter);
      if (this.waiters.size === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** Stops polling (shutdown). */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The interval of the next poll: the shortest any waiter asked for. */
  private get intervalMs(): number {
    let interval = Infinity;
    for (const waiter of this.waiters) interval = Math.min(interval, waiter.pollMs);
    return interval;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.polling || this.stopped || this.waiters.size === 0) {
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.poll();
    }, this.intervalMs);
    this.timer.unref();
  }

  private async poll(): Promise<void> {
    this.polling = true;
    try {
      await this.pollOnce();
    } finally {
      this.polling = false;
      this.schedule();
    }
  }

  private async pollOnce(): Promise<void> {
    const byAddress = new Map<string, Waiter[]>();
    for (const waiter of this.waiters) {
      const list = byAddress.get(waiter.address);
      if (list === undefined) byAddress.set(waiter.address, [waiter]);
      else list.push(waiter);
    }
    let signals: Signal[];
    try {
      signals = await this.options.store.read([...byAddress.keys()], this.now());
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn(
          `Could not read the signals of other broker replicas (retrying): ${error}`,
        );
      }
      this.failing = true;
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.options.logger.info('Reading the signals of other broker replicas again');
    }
    const consumed: number[] = [];
    for (const signal of signals) {
      for (const waiter of byAddress.get(signal.address) ?? []) {
        if (!this.waiters.has(waiter)) continue; // stopped waiting while the poll ran
        if (waiter.handler(signal)) {
          consumed.push(signal.seq);
          break;
        }
      }
    }
    if (consumed.length === 0) return;
    await this.options.store
      .remove(consumed)
      .catch(error =>
        this.options.logger.warn(`Could not delete signals already acted on: ${error}`),
      );
  }
}
