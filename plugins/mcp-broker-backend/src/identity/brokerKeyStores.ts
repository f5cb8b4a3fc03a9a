/*
 * Storage seam of the broker's own keys (spec §11.1): the subject-token signing keys and the
 * requestState HMAC keys, as generations of a key ring per purpose (KeyRing.ts). Implemented on
 * the plugin's database (store/DatabaseBrokerKeyStore.ts: values sealed with the key-encryption
 * key, shared by every replica) and in memory (MemoryBrokerKeyStore.ts: one process, no
 * key-encryption key configured). A store never decides anything: the ring does.
 */
import type { SealedCredential } from './CredentialCipher';

/** What a ring's keys are for. */
export type BrokerKeyPurpose = 'subject-token' | 'request-state';

/**
 * A key's secret material as stored: sealed with the key-encryption key, or — only a row the
 * previous version of the broker wrote, until the first start converts it, or a key of the
 * memory store — in plain text.
 */
export type StoredKeyMaterial =
  { readonly sealed: SealedCredential } | { readonly plaintext: string };

/** One generation of a key ring. */
export interface StoredBrokerKey {
  readonly purpose: BrokerKeyPurpose;
  /** 1, 2, …: the newest generation is the newest key; unique per purpose. */
  readonly generation: number;
  /** The key's id (a JWK `kid`), safe to publish. */
  readonly kid: string;
  readonly material: StoredKeyMaterial;
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms from which it signs or seals (published before, so every verifier knows it). */
  readonly activatesAt: number;
}

/** Generations of the broker's keys, shared by whoever uses the same store. */
export interface BrokerKeyStore {
  /** Every generation of `purpose`, oldest first. */
  list(purpose: BrokerKeyPurpose): Promise<StoredBrokerKey[]>;
  /**
   * Adds a generation unless that generation number exists already (another replica rotated
   * first); true when this one was added.
   */
  add(key: StoredBrokerKey): Promise<boolean>;
  /**
   * Replaces a generation's material when it is still `expected` (compare-and-set: of replicas
   * converting or re-encrypting together, one wins and the others leave it). True when replaced.
   */
  replaceMaterial(
    key: StoredBrokerKey,
    expected: StoredKeyMaterial,
    next: StoredKeyMaterial,
  ): Promise<boolean>;
  /** Removes these generations of `purpose` (a missing one is no error). */
  remove(purpose: BrokerKeyPurpose, generations: readonly number[]): Promise<void>;
}
