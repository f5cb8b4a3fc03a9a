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
 * sending replica cannot know). The store is the one writer of the table: every send, also a
 * conditional one of another store (an answer only while its held round is published), goes
 * through it. Signals expire (`expiresAt`) and are swept with the replicas' other expiring rows.
 *
 * How a waiter learns of a signal. Where the store can announce what it commits (PostgreSQL
 * `LISTEN/NOTIFY`, `listen`), each replica holds one listening connection, opened when something
 * first waits, and reads an address at once when a signal to it is announced: nothing is polled.
 * A signal sent before its waiter began to wait was announced to nobody, so each new waiter gets
 * one catch-up read within its `pollMs` (batched with the others'), at once if its address was
 * announced in the last seconds. While the store cannot announce (SQLite), or its connection is
 * down (it reconnects with backoff), the bus polls as before: ONE poller per replica, only while
 * something waits, one batched query per interval (the shortest any waiter asked for) for every
 * waiting address; after a reconnect, one read of every waiting address covers what was sent
 * meanwhile. Reads never overlap, and the signals a waiter consumed are deleted in one more
 * statement before the next read.
 *
 * Guarantees: signals of one address reach its waiter in the order they were sent (the table's
 * sequence); a consumed signal is handled once (a waiter that does not consume a signal, such
 * as a session's end that every replica must see, leaves it for the others until it expires);
 * a signal sent before its waiter began to wait (the two requests raced) still reaches it while
 * unexpired. Failure modes: a failed read is logged once until reads succeed again and delivers
 * nothing (polling goes on); a failed delete is logged (the signal is seen again at the next
 * read, and handling it twice must be harmless: ending a call is); a lost listening connection
 * is logged once until it is back, and the bus polls meanwhile.
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

/** What a store that announces the signals it commits tells its listener (see the file comment). */
export interface SignalListener {
  /** A signal to `address` was committed: a read from now on sees it. */
  signalSent(address: string): void;
  /** From now on every committed signal is announced (called again after each reconnect). */
  listening(): void;
  /** Announcements stopped (`error` says why): signals may go unannounced until `listening`. */
  lost(error: unknown): void;
}

/** A listener's subscription to a store's announcements. */
export interface SignalSubscription {
  /** Stops the announcements and closes what carried them (shutdown). */
  close(): Promise<void>;
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
  /**
   * Announces every signal committed from now on to `listener`, until the subscription is
   * closed; undefined when this store cannot (its bus then polls). Optional.
   */
  listen?(listener: SignalListener): SignalSubscription | undefined;
}

/** The address of a call's own signals (cancellations, answers). */
export function callAddress(callId: string): string {
  return `call:${callId}`;
}

/** The prefix of the addresses of every relayed round of a call. */
export function relayAddressPrefix(callId: string): string {
  return `relay:${callId}:`;
}

/** The address of what a held call's round yields for the replica that claimed it. */
export function relayAddress(callId: string, round: number): string {
  return `${relayAddressPrefix(callId)}${round}`;
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

/**
 * Default poll interval (a cancellation takes effect within about this long while signals are
 * polled; with announcements, the longest a signal sent before its waiter waited takes).
 */
export const DEFAULT_SIGNAL_POLL_MS = 250;

/** How long an announced address nobody here waited for is remembered (a waiter racing it). */
export const RECENT_ANNOUNCEMENT_MS = 5_000;

/** At most this many such addresses are remembered (the oldest are forgotten first). */
const MAX_RECENT_ANNOUNCEMENTS = 1_000;

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
  /** With announcements: waiters still owed their catch-up read. */
  private readonly unread = new Set<Waiter>();
  /** Addresses to read as soon as the read in progress (if any) is done. */
  private readonly due = new Set<string>();
  /** Every waiting address is due (a poll, or the read after a reconnect). */
  private allDue = false;
  /** Announced addresses nobody here waited for, with when (insertion order: oldest first). */
  private readonly recent = new Map<string, number>();
  private readonly now: () => number;
  private subscription: SignalSubscription | undefined;
  private announced = false;
  private listenerFailing = false;
  private timer: NodeJS.Timeout | undefined;
  private reading = false;
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
   * Waits for the signals of `address` until the returned function is called: announced ones at
   * once, and the others (all of them while the store cannot announce) read at least every
   * `pollMs`. Nothing is read while nothing waits.
   */
  watch(address: string, handler: SignalHandler, pollMs = DEFAULT_SIGNAL_POLL_MS): () => void {
    const waiter: Waiter = { address, handler, pollMs };
    // The interval the timer was set for, before this waiter counts in it.
    const scheduledMs = this.intervalMs;
    this.waiters.add(waiter);
    this.subscribe();
    if (!this.polling) {
      if (this.takeRecent(address)) this.read([address]);
      else this.unread.add(waiter);
    }
    if (this.timer !== undefined && pollMs < scheduledMs) {
      // A waiter in a hurry: the next read comes sooner.
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.schedule();
    return () => {
      this.waiters.delete(waiter);
      this.unread.delete(waiter);
      if (this.waiters.size === 0) {
        clearTimeout(this.timer);
        this.timer = undefined;
      }
    };
  }

  /** True while the store announces signals (nothing is polled then); for tests and status. */
  get listening(): boolean {
    return this.announced;
  }

  /** Stops reading, and closes the listening connection (shutdown). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.announced = false;
    clearTimeout(this.timer);
    this.timer = undefined;
    const subscription = this.subscription;
    this.subscription = undefined;
    await subscription?.close();
  }

  /** Whether every waiting address is read each interval: not announced, or reads failing. */
  private get polling(): boolean {
    return !this.announced || this.failing;
  }

  /** Asks the store for announcements, once, when something first waits. */
  private subscribe(): void {
    if (this.subscription !== undefined || this.stopped) return;
    this.subscription = this.options.store.listen?.({
      signalSent: address => this.signalSent(address),
      listening: () => this.listeningAgain(),
      lost: error => this.lost(error),
    }) ?? { close: async () => undefined };
  }

  private signalSent(address: string): void {
    if (this.stopped) return;
    for (const waiter of this.waiters) {
      if (waiter.address === address) {
        this.read([address]);
        return;
      }
    }
    this.recent.delete(address);
    this.recent.set(address, this.now());
    for (const [oldest, at] of this.recent) {
      if (
        this.recent.size <= MAX_RECENT_ANNOUNCEMENTS &&
        at > this.now() - RECENT_ANNOUNCEMENT_MS
      ) {
        break;
      }
      this.recent.delete(oldest);
    }
  }

  /** Whether `address` was announced lately while nobody here waited (forgets it). */
  private takeRecent(address: string): boolean {
    const at = this.recent.get(address);
    this.recent.delete(address);
    return at !== undefined && at > this.now() - RECENT_ANNOUNCEMENT_MS;
  }

  private listeningAgain(): void {
    if (this.stopped) return;
    if (this.listenerFailing) {
      this.listenerFailing = false;
      this.options.logger.info('Notified of the signals of other broker replicas again');
    }
    this.announced = true;
    // What was sent while nothing announced it: one read of every waiting address.
    this.unread.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    this.read('all');
  }

  private lost(error: unknown): void {
    if (this.stopped) return;
    this.announced = false;
    this.recent.clear();
    if (!this.listenerFailing) {
      this.listenerFailing = true;
      this.options.logger.warn(
        `Not notified of the signals of other broker replicas (polling them until the ` +
          `listening connection is back): ${error}`,
      );
    }
    this.schedule();
  }

  /**
   * The interval of the next timed read: polling, the shortest any waiter asked for; else the shortest any waiter still owed its catch-up read asked for.
   */
  private get intervalMs(): number {
    let interval = Infinity;
    for (const waiter of this.polling ? this.waiters : this.unread) {
      interval = Math.min(interval, waiter.pollMs);
    }
    return interval;
  }

  private schedule(): void {
    if (this.timer !== undefined || this.reading || this.stopped || this.waiters.size === 0) {
      return;
    }
    const interval = this.intervalMs;
    if (interval === Infinity) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (this.polling) {
        this.read('all');
        return;
      }
      const addresses = [...this.unread].map(waiter => waiter.address);
      this.unread.clear();
      this.read(addresses);
    }, interval);
    this.timer.unref();
  }

  /** Reads `addresses` (or every waiting one) once the read in progress, if any, is done. */
  private read(addresses: readonly string[] | 'all'): void {
    if (addresses === 'all') this.allDue = true;
    else for (const address of addresses) this.due.add(address);
    if (!this.reading) void this.readDue();
  }

  private async readDue(): Promise<void> {
    this.reading = true;
    try {
      while (!this.stopped && (this.allDue || this.due.size > 0)) {
        const byAddress = new Map<string, Waiter[]>();
        for (const waiter of this.waiters) {
          if (!this.allDue && !this.due.has(waiter.address)) continue;
          const list = byAddress.get(waiter.address);
          if (list === undefined) byAddress.set(waiter.address, [waiter]);
          else list.push(waiter);
        }
        this.allDue = false;
        this.due.clear();
        if (byAddress.size > 0) await this.readOnce(byAddress);
      }
    } finally {
      this.reading = false;
      this.schedule();
    }
  }

  private async readOnce(byAddress: Map<string, Waiter[]>): Promise<void> {
    let signals: Signal[];
    try {
      signals = await this.options.store.read([...byAddress.keys()], this.now());
    } catch (error) {
      if (!this.failing) {
        this.options.logger.warn(
          `Could not read the signals of other broker replicas (retrying): ${error}`,
        );
      }
      // Polled from now on until a read succeeds (an announced signal was not read).
      this.failing = true;
      return;
    }
    if (this.failing) {
      this.failing = false;
      this.options.logger.info('Reading the signals of other broker replicas again');
      // Whoever began to wait while reads failed is owed a read.
      this.allDue = true;
    }
    const consumed: number[] = [];
    for (const signal of signals) {
      for (const waiter of byAddress.get(signal.address) ?? []) {
        if (!this.waiters.has(waiter)) continue; // stopped waiting while the read ran
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
