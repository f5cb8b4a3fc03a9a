/*
 * The key that signs page tokens on the database store (migrations/
 * 20261124000000_pagination.js): one row, shared by every replica on the database.
 */
import { randomBytes } from 'node:crypto';
import type { Knex } from 'knex';
import { mapDatabaseError } from './databaseErrors';

/** The page token key's table and row. */
const PAGE_TOKEN_KEYS_TABLE = 'portal_page_token_keys';
const PAGE_TOKEN_KEY_ID = 'v1';
const PAGE_TOKEN_KEY_BYTES = 32;

/**
 * The key that signs page tokens, shared by every replica on this database: the first
 * caller generates it (insert-if-absent, so concurrent first starts agree on one).
 */
export async function pageTokenKey(db: Knex): Promise<Buffer> {
  try {
    await db(PAGE_TOKEN_KEYS_TABLE)
      .insert({
        id: PAGE_TOKEN_KEY_ID,
        secret: randomBytes(PAGE_TOKEN_KEY_BYTES).toString('base64url'),
      })
      .onConflict('id')
      .ignore();
    const row = await db(PAGE_TOKEN_KEYS_TABLE).where({ id: PAGE_TOKEN_KEY_ID }).first('secret');
    return Buffer.from(row.secret as string, 'base64url');
  } catch (error) {
    throw mapDatabaseError(error);
  }
}
