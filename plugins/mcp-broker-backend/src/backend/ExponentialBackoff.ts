/**
 * Exponential backoff with "equal jitter": attempt n waits between half and all of
 * `min(maxDelay, initialDelay * 2^n)`, so reconnecting brokers do not stampede a backend that
 * just came back, while the delay never drops below half the nominal value.
 */
export class ExponentialBackoff {
  private attempt = 0;

  constructor(
    private readonly initialDelayMs: number,
    private readonly maxDelayMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  /** The delay before the next attempt; each call counts one failed attempt. */
  nextDelayMs(): number {
    const nominal = Math.min(
      this.maxDelayMs,
      this.initialDelayMs * 2 ** Math.min(this.attempt, 30),
    );
    this.attempt++;
    return Math.round(nominal / 2 + (this.random() * nominal) / 2);
  }

  /** Failed attempts since the last reset. */
  get failures(): number {
    return this.attempt;
  }

  /** Called after a healthy connection: the next failure starts from `initialDelay` again. */
  reset(): void {
    this.attempt = 0;
  }
}
