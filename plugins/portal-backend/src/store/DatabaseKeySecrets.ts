/*
 * The secrets of approved keys in the database store: `portal_api_key_secrets` (PK
 * namespace+name, FK → keys ON DELETE CASCADE), apart from the key records. Secrets are
 * only ever read by `revealSecret`; every other use of the table is an insert or a delete,
 * inside the transaction of the key change it belongs to.
 *
 * revealSecret: `UPDATE … SET secret_revealed = true WHERE phase = 'Approved' AND
 * secret_revealed = false`; only the caller whose update hit a row reads the secret
 * (PostgreSQL row locks and SQLite's single writer serialise the contenders).
 *
 * Nothing here logs a secret.
 */
import { ConflictError, NotFoundError } from '@backstage/errors';
import type { ObjectRef } from '@devportal/plugin-portal-common';
import type { Knex } from 'knex';
import { mapDatabaseError } from './databaseErrors';
import { KEYS_TABLE, SECRETS_TABLE, nowTimestamp, type KeyRow } from './databaseRows';
import { refText } from './productOwner';

/** The key secrets table of the database `PortalStore`. */
export class DatabaseKeySecrets {
  constructor(private readonly db: Knex) {}

  /** Stores the secret of key `ref`, in the transaction that approves it. */
  async insert(trx: Knex.Transaction, ref: ObjectRef, secret: string): Promise<void> {
    await trx(SECRETS_TABLE).insert({ namespace: ref.namespace, name: ref.name, secret });
  }

  /** Deletes the secret of key `ref` (revocation), in the transaction that deletes the key. */
  async deleteOfKey(trx: Knex.Transaction, ref: ObjectRef): Promise<void> {
    await trx(SECRETS_TABLE).where({ namespace: ref.namespace, name: ref.name }).delete();
  }

  /** Deletes the secrets of the keys `keys` selects (`namespace`, `name` columns). */
  async deleteOfKeys(trx: Knex.Transaction, keys: Knex.QueryBuilder): Promise<void> {
    await trx(SECRETS_TABLE).whereIn(['namespace', 'name'], keys).delete();
  }

  /** `PortalStore.revealSecret`: see the comment at the top of this file. */
  async revealSecret(ref: ObjectRef): Promise<string> {
    try {
      return await this.db.transaction(async trx => {
        const updated = await trx<KeyRow>(KEYS_TABLE)
          .where({
            namespace: ref.namespace,
            name: ref.name,
            phase: 'Approved',
            secret_revealed: false,
          })
          .update({
            secret_revealed: true,
            secret_revealed_at: nowTimestamp(),
            resource_version: trx.raw('resource_version + 1'),
          });
        if (updated === 0) {
          const row = await trx<KeyRow>(KEYS_TABLE)
            .where({ namespace: ref.namespace, name: ref.name })
            .first('phase');
          if (!row) {
            throw new NotFoundError(`API key ${refText(ref)} not found`);
          }
          if (row.phase !== 'Approved') {
            throw new ConflictError(
              `API key ${refText(ref)} is ${row.phase}, not Approved: it has no secret`,
            );
          }
          throw new ConflictError(`The secret of API key ${refText(ref)} was already revealed`);
        }
        const secret = await trx(SECRETS_TABLE)
          .where({ namespace: ref.namespace, name: ref.name })
          .first('secret');
        if (!secret) {
          // Only possible if the secret row was removed by hand; rolls the reveal back.
          throw new NotFoundError(`The secret of API key ${refText(ref)} is missing`);
        }
        return secret.secret as string;
      });
    } catch (error) {
      throw mapDatabaseError(error);
    }
  }
}
