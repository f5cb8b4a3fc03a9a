/*
 * Single use of a `requestState` (spec §9): every sealed state carries a random nonce, and
 * opening the state claims that nonce once. The claim must be atomic across replicas, so it sits
 * behind this small store interface: in memory for one replica (the default), in the plugin's
 * database for several (src/store/DatabaseRequestStateNonceStore.ts). A nonce is kept until the
 * state it belongs to has expired (after that the expiry check refuses the state anyway), so the
 * store stays as small as the states alive at one time.
 */

/** Remembers the nonces of opened `requestState`s until they expire. */
export interface RequestStateNonceStore {
  /**
   * Marks the nonce as used. True for exactly one call per nonce across every replica sharing
   * the store (the first); false when it was used before.
   */
  claim(nonce: string, expiresAt: number): Promise<boolean>;
  /** Forgets nonces whose states expired at or before `now` (epoch ms). */
  deleteExpired(now: number): Promise<void>;
}

/** {@link RequestStateNonceStore} of one process. Expired nonces are swept while claiming. */
export class MemoryRequestStateNonceStore implements RequestStateNonceStore {
  readonly #used = new Map<string, number>();
  #nextSweep = 0;

  constructor(private readonly now: () => number = Date.now) {}

  async claim(nonce: string, expiresAt: number): Promise<boolean> {
    const now = this.now();
    if (now >= this.#nextSweep) {
      await this.deleteExpired(now);
      this.#nextSweep = now + 60_000;
    }
    if (this.#used.has(nonce)) return false;
    this.#used.set(nonce, expiresAt);
    return true;
  }

  async deleteExpired(now: number): Promise<void> {
    for (const [nonce, expiresAt] of this.#used) {
      if (expiresAt <= now) this.#used.delete(nonce);
    }
  }
}
