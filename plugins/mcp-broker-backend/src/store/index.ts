/* Shared state for several broker replicas (spec §6): the database stores and their migrations. */
export { DatabaseClientSessionStore, CLIENT_SESSIONS_TABLE } from './DatabaseClientSessionStore';
export { DatabaseElicitationIdStore, ELICITATIONS_TABLE } from './DatabaseElicitationIdStore';
export { DatabaseHeldCallStore, HELD_CALLS_TABLE } from './DatabaseHeldCallStore';
export { DatabaseSignalStore, SIGNALS_TABLE } from './DatabaseSignalStore';
export { DatabaseQuotaStore, RATE_WINDOWS_TABLE } from './DatabaseQuotaStore';
export { DatabaseReplicaPresenceStore, REPLICAS_TABLE } from './DatabaseReplicaPresenceStore';
export { DatabaseTaskStore, TASKS_TABLE } from './DatabaseTaskStore';
export { migrateBrokerDatabase, rollbackBrokerDatabase } from './migrations';
export {
  readSessionStoreKind,
  readSignalNotifications,
  createSharedStateStores,
} from './sharedStateConfig';
export type { SessionStoreKind, SharedStateStores } from './sharedStateConfig';
export {
  DatabaseRequestStateNonceStore,
  REQUEST_STATE_NONCES_TABLE,
} from './DatabaseRequestStateNonceStore';
export { DatabaseBrokerKeyStore, KEY_RING_TABLE } from './DatabaseBrokerKeyStore';
export { createIdentityStores } from './identityStores';
export type { IdentityStores } from './identityStores';
export {
  DatabasePersonalCredentialStore,
  DatabaseCredentialRequestStore,
  PERSONAL_CREDENTIALS_TABLE,
  CREDENTIAL_REQUESTS_TABLE,
} from './DatabasePersonalCredentialStore';
