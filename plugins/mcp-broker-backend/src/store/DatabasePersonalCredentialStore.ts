/*
 * The identity module's stores (identity/personalCredentialStores.ts) on the plugin's database,
 * shared by every replica (spec §11). Values arrive sealed; nothing here can read a credential.
 * Replacements are upserts on the primary key and re-sealing is a compare-and-set on the old
 * ciphertext, so concurrent writers never leave a half-written or mixed row.
 */
import type { Knex } from 'knex';
import type { SealedCredential } from '../identity/CredentialCipher';
import type {
  CredentialDates,
  CredentialListing,
  CredentialRequest,
  CredentialRequestStore,
  PersonalCredentialStore,
  StoredCredential,
} from '../identity/personalCredentialStores';

/** Table of sealed personal credentials (see migrations/). */
export const PERSONAL_CREDENTIALS_TABLE = 'mcp_broker_personal_credentials';
/** Table of pending credential requests (URL-mode elicitations). */
export const CREDENTIAL_REQUESTS_TABLE = 'mcp_broker_credential_requests';

interface CredentialRow {
  principal: string;
  server: string;
  server_id: string;
  key_id: string;
  nonce: string;
  ciphertext: string;
  created_at: number | string;
  updated_at: number | string;
}

function storedOf(row: CredentialRow): StoredCredential {
  return {
    principal: row.principal,
    server: row.server,
    serverId: row.server_id,
    sealed: { keyId: row.key_id, nonce: row.nonce, ciphertext: row.ciphertext },
    // pg returns bigint columns as strings.
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

/** {@link PersonalCredentialStore} on the plugin's database. */
export class DatabasePersonalCredentialStore implements PersonalCredentialStore {
  constructor(private readonly knex: Knex) {}

  async put(
    principal: string,
    server: string,
    serverId: string,
    sealed: SealedCredential,
    now: number,
  ): Promise<CredentialDates> {
    const values = {
      server_id: serverId,
      key_id: sealed.keyId,
      nonce: sealed.nonce,
      ciphertext: sealed.ciphertext,
    };
    await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .insert({ principal, server, ...values, created_at: now, updated_at: now })
      .onConflict(['principal', 'server'])
      .merge({ ...values, updated_at: now });
    const row = await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .where({ principal, server })
      .first('created_at', 'updated_at');
    return { createdAt: Number(row.created_at), updatedAt: Number(row.updated_at) };
  }

  async get(principal: string, server: string): Promise<StoredCredential | undefined> {
    const row: CredentialRow | undefined = await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .where({ principal, server })
      .first();
    return row === undefined ? undefined : storedOf(row);
  }

  async list(principal: string): Promise<CredentialListing[]> {
    const rows: Array<Pick<CredentialRow, 'server' | 'server_id' | 'created_at' | 'updated_at'>> =
      await this.knex(PERSONAL_CREDENTIALS_TABLE)
        .where({ principal })
        .orderBy('server')
        .select('server', 'server_id', 'created_at', 'updated_at');
    return rows.map(r => ({
      server: r.server,
      serverId: r.server_id,
      createdAt: Number(r.created_at),
      updatedAt: Number(r.updated_at),
    }));
  }

  async delete(principal: string, server: string): Promise<boolean> {
    const deleted = await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .where({ principal, server })
      .delete();
    return deleted > 0;
  }

  async keyIds(): Promise<Array<{ keyId: string; count: number }>> {
    const rows: Array<{ key_id: string; count: number | string }> = await this.knex(
      PERSONAL_CREDENTIALS_TABLE,
    )
      .groupBy('key_id')
      .select('key_id')
      .count({ count: '*' });
    return rows.map(r => ({ keyId: r.key_id, count: Number(r.count) }));
  }

  async withKey(keyId: string, limit: number): Promise<StoredCredential[]> {
    const rows: CredentialRow[] = await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .where({ key_id: keyId })
      .orderBy(['principal', 'server'])
      .limit(limit);
    return rows.map(storedOf);
  }

  async reseal(stored: StoredCredential, next: SealedCredential): Promise<boolean> {
    const updated = await this.knex(PERSONAL_CREDENTIALS_TABLE)
      .where({
        principal: stored.principal,
        server: stored.server,
        key_id: stored.sealed.keyId,
        nonce: stored.sealed.nonce,
      })
      .update({ key_id: next.keyId, nonce: next.nonce, ciphertext: next.ciphertext });
    return updated > 0;
  }
}

interface RequestRow {
  id: string;
  principal: string;
  server: string;
  client_session_id: string | null;
  expires_at: number | string;
}

/** {@link CredentialRequestStore} on the plugin's database. */
export class DatabaseCredentialRequestStore implements CredentialRequestStore {
  constructor(private readonly knex: Knex) {}

  async create(request: CredentialRequest): Promise<void> {
    await this.knex(CREDENTIAL_REQUESTS_TABLE).insert({
      id: request.id,
      principal: request.principal,
      server: request.server,
      client_session_id: request.clientSessionId ?? null,
      expires_at: request.expiresAt,
    });
  }

  async get(id: string, now: number): Promise<CredentialRequest | undefined> {
    const row: RequestRow | undefined = await this.knex(CREDENTIAL_REQUESTS_TABLE)
      .where({ id })
      .andWhere('expires_at', '>', now)
      .first();
    if (row === undefined) return undefined;
    return {
      id: row.id,
      principal: row.principal,
      server: row.server,
      ...(row.client_session_id === null ? {} : { clientSessionId: row.client_session_id }),
      expiresAt: Number(row.expires_at),
    };
  }

  async complete(id: string): Promise<boolean> {
    return (await this.knex(CREDENTIAL_REQUESTS_TABLE).where({ id }).delete()) > 0;
  }

  async deleteExpired(now: number): Promise<void> {
    await this.knex(CREDENTIAL_REQUESTS_TABLE).where('expires_at', '<=', now).delete();
  }
}
