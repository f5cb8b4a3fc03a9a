/*
 * The stores of the identity module (spec §11) on the plugin's database. Unlike the session
 * stores they exist whatever `mcpBroker.sessionStore` says: personal credentials and the subject
 * token key belong in the broker's database on one replica as on many. Migrates first (unless
 * the database service skips migrations).
 */
import type { DatabaseService } from '@backstage/backend-plugin-api';
import type {
  CredentialRequestStore,
  PersonalCredentialStore,
  SigningKeyStore,
} from '../identity/personalCredentialStores';
import {
  DatabaseCredentialRequestStore,
  DatabasePersonalCredentialStore,
  DatabaseSigningKeyStore,
} from './DatabasePersonalCredentialStore';
import { migrateBrokerDatabase } from './migrations';

/** The identity module's stores. */
export interface IdentityStores {
  credentials: PersonalCredentialStore;
  requests: CredentialRequestStore;
  signingKeys: SigningKeyStore;
}

/** Builds the identity stores on the plugin's database. */
export async function createIdentityStores(database: DatabaseService): Promise<IdentityStores> {
  const knex = await database.getClient();
  if (!database.migrations?.skip) await migrateBrokerDatabase(knex);
  return {
    credentials: new DatabasePersonalCredentialStore(knex),
    requests: new DatabaseCredentialRequestStore(knex),
    signingKeys: new DatabaseSigningKeyStore(knex),
  };
}
