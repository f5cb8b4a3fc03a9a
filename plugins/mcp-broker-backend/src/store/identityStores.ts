/*
 * The stores of the identity module (spec §11) on the plugin's database. Unlike the session
 * stores they exist whatever `mcpBroker.sessionStore` says: personal credentials belong in the
 * broker's database on one replica as on many. Migrates first (unless the database service skips
 * migrations).
 *
 * The broker's own keys (spec §11.1) are kept in the database only sealed with the
 * key-encryption key (`mcpBroker.credentialEncryptionKey`). Without one they stay in this process
 * (one replica), and keys an earlier version left in the clear are deleted; several replicas
 * (`sessionStore: database`) must share them, so there a missing key fails start-up.
 */
import type { DatabaseService, LoggerService } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import type { BrokerKeyStore } from '../identity/brokerKeyStores';
import { MemoryBrokerKeyStore } from '../identity/MemoryBrokerKeyStore';
import type {
  CredentialRequestStore,
  PersonalCredentialStore,
} from '../identity/personalCredentialStores';
import { DatabaseBrokerKeyStore } from './DatabaseBrokerKeyStore';
import {
  DatabaseCredentialRequestStore,
  DatabasePersonalCredentialStore,
} from './DatabasePersonalCredentialStore';
import { migrateBrokerDatabase } from './migrations';

/** The identity module's stores. */
export interface IdentityStores {
  credentials: PersonalCredentialStore;
  requests: CredentialRequestStore;
  /** The broker's key rings. */
  keys: BrokerKeyStore;
}

/** Where the broker's keys may be kept. */
export interface IdentityStoreOptions {
  /** True when `mcpBroker.credentialEncryptionKey` is configured. */
  keyEncryption: boolean;
  /** True with `sessionStore: database` (several replicas share the keys). */
  shared: boolean;
  logger: LoggerService;
}

/** Builds the identity stores on the plugin's database; see the file comment. */
export async function createIdentityStores(
  database: DatabaseService,
  options: IdentityStoreOptions,
): Promise<IdentityStores> {
  if (options.shared && !options.keyEncryption) {
    throw new InputError(
      'mcpBroker.credentialEncryptionKey is required with mcpBroker.sessionStore: database: the replicas share the broker’s signing and requestState keys through the database, which keeps them only encrypted with that key (e.g. "openssl rand -base64 32", the same on every replica)',
    );
  }
  const knex = await database.getClient();
  if (!database.migrations?.skip) await migrateBrokerDatabase(knex);
  const databaseKeys = new DatabaseBrokerKeyStore(knex);
  if (!options.keyEncryption) {
    const removed = await databaseKeys.removePlaintext();
    if (removed > 0) {
      options.logger.warn(
        `MCP broker: deleted ${removed} key(s) an earlier version kept unencrypted in the database; without mcpBroker.credentialEncryptionKey this replica keeps its keys in memory`,
      );
    }
  }
  return {
    credentials: new DatabasePersonalCredentialStore(knex),
    requests: new DatabaseCredentialRequestStore(knex),
    keys: options.keyEncryption ? databaseKeys : new MemoryBrokerKeyStore(),
  };
}
