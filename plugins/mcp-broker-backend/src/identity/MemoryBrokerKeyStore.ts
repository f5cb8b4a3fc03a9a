/*
 * The broker's key rings in this process only: for a broker without a key-encryption key
 * (`mcpBroker.credentialEncryptionKey` not set) and one replica (`sessionStore: memory`). Keys
 * then never reach the database; they rotate the same way and die with the process (a subject
 * token lives two minutes; a requestState belongs to a call that this process holds anyway).
 */
import type {
  BrokerKeyPurpose,
  BrokerKeyStore,
  StoredBrokerKey,
  StoredKeyMaterial,
} from './brokerKeyStores';

/** {@link BrokerKeyStore} in memory; see the file comment. */
export class MemoryBrokerKeyStore implements BrokerKeyStore {
  readonly #keys = new Map<BrokerKeyPurpose, StoredBrokerKey[]>();

  async list(purpose: BrokerKeyPurpose): Promise<StoredBrokerKey[]> {
    return [...(this.#keys.get(purpose) ?? [])];
  }

  async add(key: StoredBrokerKey): Promise<boolean> {
    const ring = this.#keys.get(key.purpose) ?? [];
    if (ring.some(k => k.generation === key.generation)) return false;
    this.#keys.set(
      key.purpose,
      [...ring, key].sort((a, b) => a.generation - b.generation),
    );
    return true;
  }

  async replaceMaterial(
    key: StoredBrokerKey,
    expected: StoredKeyMaterial,
    next: StoredKeyMaterial,
  ): Promise<boolean> {
    const ring = this.#keys.get(key.purpose) ?? [];
    const index = ring.findIndex(k => k.generation === key.generation);
    if (index < 0 || ring[index].material !== expected) return false;
    ring[index] = { ...ring[index], material: next };
    return true;
  }

  async remove(purpose: BrokerKeyPurpose, generations: readonly number[]): Promise<void> {
    const ring = this.#keys.get(purpose) ?? [];
    this.#keys.set(
      purpose,
      ring.filter(k => !generations.includes(k.generation)),
    );
  }
}
