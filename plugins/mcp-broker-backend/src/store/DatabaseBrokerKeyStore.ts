/*
 * The broker's key rings (identity/KeyRing.ts) on the plugin's database, shared by every
 * replica. Values arrive sealed; nothing here can read a key. A new generation is an insert on
 * the (purpose, generation) primary key that ignores a conflict, so of replicas rotating together
 * exactly one adds it; converting and re-sealing are compare-and-set updates on the old material.
 */
import type { Knex } from 'knex';
import type {
  BrokerKeyPurpose,
  BrokerKeyStore,
  StoredBrokerKey,
  StoredKeyMaterial,
} from '../identity/brokerKeyStores';

/** Table of the broker's key rings (see migrations/). */
export const KEY_RING_TABLE = 'mcp_broker_key_ring';

interface KeyRow {
  purpose: BrokerKeyPurpose;
  generation: number | string;
  kid: string;
  kek_id: string | null;
  nonce: string | null;
  ciphertext: string | null;
  plaintext: string | null;
  created_at: number | string;
  activates_at: number | string;
}

function materialColumns(material: StoredKeyMaterial) {
  return 'sealed' in material
    ? {
        kek_id: material.sealed.keyId,
        nonce: material.sealed.nonce,
        ciphertext: material.sealed.ciphertext,
        plaintext: null,
      }
    : { kek_id: null, nonce: null, ciphertext: null, plaintext: material.plaintext };
}

function keyOf(row: KeyRow): StoredBrokerKey {
  return {
    purpose: row.purpose,
    // pg returns bigint columns as strings.
    generation: Number(row.generation),
    kid: row.kid,
    material:
      row.plaintext !== null
        ? { plaintext: row.plaintext }
        : { sealed: { keyId: row.kek_id!, nonce: row.nonce!, ciphertext: row.ciphertext! } },
    createdAt: Number(row.created_at),
    activatesAt: Number(row.activates_at),
  };
}

/** {@link BrokerKeyStore} on the plugin's database. */
export class DatabaseBrokerKeyStore implements BrokerKeyStore {
  constructor(private readonly knex: Knex) {}

  async list(purpose: BrokerKeyPurpose): Promise<StoredBrokerKey[]> {
    const rows: KeyRow[] = await this.knex(KEY_RING_TABLE).where({ purpose }).orderBy('generation');
    return rows.map(keyOf);
  }

  async add(key: StoredBrokerKey): Promise<boolean> {
    const { sql, bindings } = this.knex(KEY_RING_TABLE)
      .insert({
        purpose: key.purpose,
        generation: key.generation,
        kid: key.kid,
        ...materialColumns(key.material),
        created_at: key.createdAt,
        activates_at: key.activatesAt,
      })
      .onConflict(['purpose', 'generation'])
      .ignore()
      .toSQL();
    // Raw because knex leaves RETURNING off inserts for SQLite, which supports it since 3.35.
    const result = await this.knex.raw(`${sql} returning generation`, bindings);
    const rows: unknown[] = Array.isArray(result) ? result : result.rows;
    return rows.length === 1;
  }

  async replaceMaterial(
    key: StoredBrokerKey,
    expected: StoredKeyMaterial,
    next: StoredKeyMaterial,
  ): Promise<boolean> {
    const current =
      'sealed' in expected ? { nonce: expected.sealed.nonce } : { plaintext: expected.plaintext };
    const updated = await this.knex(KEY_RING_TABLE)
      .where({ purpose: key.purpose, generation: key.generation, ...current })
      .update(materialColumns(next));
    return updated > 0;
  }

  async remove(purpose: BrokerKeyPurpose, generations: readonly number[]): Promise<void> {
    await this.knex(KEY_RING_TABLE)
      .where({ purpose })
      .whereIn('generation', [...generations])
      .delete();
  }

  /** Deletes every key stored in the clear (a broker without a key-encryption key keeps none). */
  async removePlaintext(): Promise<number> {
    return this.knex(KEY_RING_TABLE).whereNotNull('plaintext').delete();
  }
}
