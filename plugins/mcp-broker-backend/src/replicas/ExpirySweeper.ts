/*
 * The one sweeper of expiring records (gateway ids, used requestState nonces, held rounds,
 * signals between replicas): every interval, each store deletes what expired. Every record
 * carries its expiry and is refused or ignored once past it whether or not it was swept, so the
 * sweep only bounds the tables; a failed sweep is reported and tried again at the next beat.
 */

/** A store of expiring records. */
export interface ExpiringRecords {
  deleteExpired(now: number): Promise<unknown>;
}

/** How often expired records are swept. */
export const SWEEP_INTERVAL_MS = 60_000;

/** See the file comment. */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stores: ReadonlyArray<ExpiringRecords>,
    private readonly onError: (error: unknown) => void,
    private readonly intervalMs: number = SWEEP_INTERVAL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Sweeps every `intervalMs` until {@link ExpirySweeper.stop} (never keeps the process alive). */
  start(): void {
    this.stop();
    this.timer = setInterval(() => {
      const now = this.now();
      for (const store of this.stores) store.deleteExpired(now).catch(this.onError);
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
