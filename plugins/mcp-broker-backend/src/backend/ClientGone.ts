/*
 * The client's side of one call ending (its connection closed early, its session ended, the
 * broker stops), as a one-shot flag with a single watcher.
 *
 * Why not an AbortSignal: a call has one AbortController, the forwarder's, whose signal stops
 * the backend request. The client's side ending does not abort it directly (the backend is told
 * `notifications/cancelled` first), so an AbortSignal here was a second signal per call whose
 * only listener was the forwarder (issue #21: each AbortSignal costs an EventTarget and a few
 * microseconds). Each sink has exactly one consumer (the forwarder, a held call's output, or a
 * mailbox relay), so one watcher slot is enough.
 *
 * Guarantees: the watcher is called at most once, after `gone` became true; watching a flag
 * that is already gone calls the watcher at once.
 */

/** See the file comment. */
export interface ClientGone {
  /** True once the client's side of the call ended. */
  readonly gone: boolean;
  /**
   * Calls `watcher` once when the client's side ends (at once when it already has). One watcher
   * at a time: a new one replaces the previous one; undefined stops watching.
   */
  watch(watcher: (() => void) | undefined): void;
}

/** A {@link ClientGone} that its owner marks gone. */
export class ClientGoneFlag implements ClientGone {
  #gone = false;
  #watcher: (() => void) | undefined;

  get gone(): boolean {
    return this.#gone;
  }

  watch(watcher: (() => void) | undefined): void {
    this.#watcher = watcher;
    if (this.#gone) this.#notify();
  }

  /** Marks the client's side gone and tells the watcher. Idempotent. */
  markGone(): void {
    if (this.#gone) return;
    this.#gone = true;
    this.#notify();
  }

  #notify(): void {
    const watcher = this.#watcher;
    this.#watcher = undefined;
    watcher?.();
  }
}

/** The client's side of a call that never ends by itself (its client is elsewhere). */
export const NEVER_GONE: ClientGone = Object.freeze({ gone: false, watch: () => undefined });
