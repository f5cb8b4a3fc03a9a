/*
 * A ring of the broker's own keys of one purpose (spec §11.1): the subject-token signing key or
 * the requestState HMAC key. Rotation without downtime, shared by every replica through the
 * store:
 *
 * - A key is a generation. The newest generation whose `activatesAt` has passed signs (seals);
 *   every generation still in the ring verifies (opens), and is published (the JWKS).
 * - When the newest generation has been active for `maxAgeMs`, the first replica to notice adds
 *   the next one (generation numbers are unique: of replicas racing, one wins and all read it).
 *   It activates `publishAheadMs` later, so every replica (which reloads every `checkIntervalMs`)
 *   and every verifier caching the JWKS knows it before anything is signed with it.
 * - A generation is removed once its successor has been active for `retainMs`: everything it
 *   signed has expired by then (a subject token's lifetime plus clock skew; a requestState's
 *   `elicitationTtl`).
 * - Key material is sealed with the key-encryption key (CredentialCipher, the
 *   `credentialEncryptionKey` and its previous keys) before it reaches the store, bound to the
 *   purpose and kid. Rows the previous version stored in plain text are sealed on load
 *   (compare-and-set: replicas starting together convert each row once); rows sealed with a
 *   previous key-encryption key are re-sealed with the current one. Without a cipher (the memory
 *   store of one process) material stays in the process.
 *
 * Failure modes: at start (`load`) a generation whose key-encryption key is not configured fails
 * (never a silent new key beside an unreadable one); later a reload that fails keeps the last
 * snapshot and is retried at the next interval (the caller logs it).
 */
import { randomBytes } from 'node:crypto';
import type {
  BrokerKeyPurpose,
  BrokerKeyStore,
  StoredBrokerKey,
  StoredKeyMaterial,
} from './brokerKeyStores';
import { CredentialKeyError, type CredentialCipher } from './CredentialCipher';

/** A usable key of the ring. */
export interface RingKey {
  readonly kid: string;
  readonly generation: number;
  /** The secret: a private JWK as JSON (signing) or base64url bytes (HMAC). Never logged. */
  readonly material: string;
  readonly activatesAt: number;
}

/** What one ring is for and how it turns. */
export interface KeyRingOptions {
  purpose: BrokerKeyPurpose;
  store: BrokerKeyStore;
  /** Seals material at rest; undefined only for a store of this process alone. */
  cipher: CredentialCipher | undefined;
  /** A fresh key's material. */
  generate(): string;
  /** How long a generation signs before the next is added. */
  maxAgeMs: number;
  /** How long an older generation still verifies after its successor activated. */
  retainMs: number;
  /** How long a new generation is published before it signs. */
  publishAheadMs: number;
  /** Epoch ms; tests pass their own clock. */
  now?: () => number;
}

/** Owner half of the additional data binding a sealed key to its purpose and kid. */
const SEALED_KEY_OWNER = 'mcp-broker key';

/** Thrown when a stored key cannot be opened with the configured key-encryption keys. */
export class BrokerKeyError extends Error {
  readonly name = 'BrokerKeyError';
}

/** One purpose's keys; see the file comment. */
export class KeyRing {
  #keys: readonly RingKey[] = [];

  constructor(private readonly options: KeyRingOptions) {}

  private get now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** The purpose, as named in logs. */
  get purpose(): BrokerKeyPurpose {
    return this.options.purpose;
  }

  /** The key that signs now: the newest active generation. */
  current(): RingKey {
    const now = this.now;
    // The oldest key when none is active yet: a ring's first key signs at once, even on a replica
    // whose clock is a little behind the one that made it.
    let current: RingKey | undefined = this.#keys[0];
    for (const key of this.#keys) if (key.activatesAt <= now) current = key;
    if (current === undefined) throw new Error(`the ${this.purpose} key ring is not loaded`);
    return current;
  }

  /** Every key that verifies (oldest first), including one published ahead of its activation. */
  all(): readonly RingKey[] {
    return this.#keys;
  }

  /**
   * Reads the ring, converts or re-seals stored material, adds a generation when one is due and
   * removes expired ones. Throws BrokerKeyError for a generation no configured key opens.
   */
  async load(): Promise<void> {
    const { store, purpose } = this.options;
    let rows = await store.list(purpose);
    const newest = rows[rows.length - 1];
    const now = this.now;
    if (newest === undefined || newest.activatesAt + this.options.maxAgeMs <= now) {
      const kid = randomBytes(12).toString('base64url');
      // Of replicas adding the same generation one wins; every replica reads the winner below.
      await store.add({
        purpose,
        generation: (newest?.generation ?? 0) + 1,
        kid,
        material: this.seal(this.options.generate(), purpose, kid),
        createdAt: now,
        // The first key signs at once: nobody can hold a token of a ring that did not exist.
        activatesAt: newest === undefined ? now : now + this.options.publishAheadMs,
      });
      rows = await store.list(purpose);
    }
    const keys: RingKey[] = [];
    for (const row of rows) keys.push(await this.open(row));
    this.#keys = keys;
    await this.removeExpired(rows);
  }

  private async removeExpired(rows: readonly StoredBrokerKey[]): Promise<void> {
    const now = this.now;
    const expired: number[] = [];
    for (let i = 0; i + 1 < rows.length; i++) {
      // Any later generation active for retainMs ends everything signed by this one.
      if (rows.slice(i + 1).some(later => later.activatesAt + this.options.retainMs <= now)) {
        expired.push(rows[i].generation);
      }
    }
    if (expired.length === 0) return;
    await this.options.store.remove(this.purpose, expired);
    this.#keys = this.#keys.filter(key => !expired.includes(key.generation));
  }

  private seal(material: string, purpose: string, kid: string): StoredKeyMaterial {
    const { cipher } = this.options;
    if (cipher === undefined) return { plaintext: material };
    return { sealed: cipher.seal(material, SEALED_KEY_OWNER, `${purpose}/${kid}`) };
  }

  /** The row's material in the clear; converts plain text and re-seals under a previous key. */
  private async open(row: StoredBrokerKey): Promise<RingKey> {
    const { cipher, store } = this.options;
    const key = (material: string): RingKey => ({
      kid: row.kid,
      generation: row.generation,
      material,
      activatesAt: row.activatesAt,
    });
    if ('plaintext' in row.material) {
      if (cipher !== undefined) {
        await store.replaceMaterial(
          row,
          row.material,
          this.seal(row.material.plaintext, row.purpose, row.kid),
        );
      }
      return key(row.material.plaintext);
    }
    if (cipher === undefined) {
      throw new BrokerKeyError(
        `The broker's ${row.purpose} keys are stored encrypted, but mcpBroker.credentialEncryptionKey is not set: configure the key they were stored with`,
      );
    }
    let material: string;
    try {
      material = cipher.open(row.material.sealed, SEALED_KEY_OWNER, `${row.purpose}/${row.kid}`);
    } catch (error) {
      if (!(error instanceof CredentialKeyError)) throw error;
      throw new BrokerKeyError(
        `The broker's ${row.purpose} key ${row.kid} is encrypted with key ${row.material.sealed.keyId}, which is neither mcpBroker.credentialEncryptionKey (key ${cipher.currentKeyId}) nor one of mcpBroker.previousCredentialEncryptionKeys (or the row was altered): configure the key it was stored with`,
      );
    }
    if (row.material.sealed.keyId !== cipher.currentKeyId) {
      await store.replaceMaterial(row, row.material, this.seal(material, row.purpose, row.kid));
    }
    return key(material);
  }
}
